// The official Rails JS client (@rails/actioncable, from Debian's ruby-actioncable) under node, with the `ws`
// package (Debian's node-ws) as its WebSocket: the peer that SideBySideBenchmark measures CableBench against.
//
//     node Benchmarks/js/cable-bench.js URL N SUBS
//
// Same contract as CableBench: subscribes SUBS identifiers {"channel":"BenchChannel","sub":i}, starts the clock
// once all are confirmed, counts data messages over all subscriptions and stops at the one {"end":true}
// message. Prints `received <count> in <seconds> s`; exits 0 when count == N.
"use strict";

const [url, nText, subsText] = process.argv.slice(2);
const expected = Number(nText);
const subscriptionCount = Number(subsText);
if (!url || !Number.isInteger(expected) || !Number.isInteger(subscriptionCount) || subscriptionCount < 1) {
  process.stderr.write("usage: node cable-bench.js URL N SUBS\n");
  process.exit(2);
}

const ActionCable = require("./rails-host.js");

const consumer = ActionCable.createConsumer(url);
let confirmed = 0;
let count = 0;
let start = 0n;

function finish() {
  const seconds = Number(process.hrtime.bigint() - start) / 1e9;
  process.stdout.write(`received ${count} in ${seconds.toFixed(3)} s\n`);
  process.exit(count === expected ? 0 : 1);
}

for (let index = 0; index < subscriptionCount; index++) {
  consumer.subscriptions.create({ channel: "BenchChannel", sub: index }, {
    connected() {
      confirmed += 1;
      if (confirmed === subscriptionCount) start = process.hrtime.bigint();
    },
    received(data) {
      if (data.end === true) return finish();
      count += 1;
    },
  });
}
