// The Rails JS client's side of LatencyBenchmark: @rails/actioncable under node (host shims as in
// cable-bench.js) against CableBenchServer's paced mode, timing every message.
//
//     node Benchmarks/js/cable-latency.js URL N SUBS
//
// Same contract as CableBench's latency mode: subscribes SUBS identifiers {"channel":"BenchChannel","sub":i};
// every data message is {"t":<CLOCK_MONOTONIC ns at send>,…}, and `received` records now - t, with now from
// `process.hrtime.bigint()` (CLOCK_MONOTONIC on Linux), in the same fixed log-linear histogram as
// Benchmarks/BenchSupport/LatencyHistogram.swift (change both together). CPU (`process.cpuUsage()`) and context
// switches (`process.resourceUsage()`) are taken over the receive phase: from every subscription confirmed to
// the {"end":true} message. Prints the same two lines as LatencySummary:
//
//     latency count=N p50=… p99=… p999=… max=… cpu=… nvcsw=… nivcsw=…
//     dist <50us:… <100us:… <250us:… <500us:… <1ms:… <10ms:… >=10ms:…
//
// and exits 0 when all N data messages arrived stamped, 1 otherwise (2 for bad arguments).
"use strict";

const [url, nText, subsText] = process.argv.slice(2);
const expected = Number(nText);
const subscriptionCount = Number(subsText);
if (!url || !Number.isInteger(expected) || !Number.isInteger(subscriptionCount) || subscriptionCount < 1) {
  process.stderr.write("usage: node cable-latency.js URL N SUBS\n");
  process.exit(2);
}

const ActionCable = require("./rails-host.js");

// LatencyHistogram: exact below 64 ns, then 32 buckets per power of two, up to 2^36 ns; the last bucket holds
// the rest. Bucket i >= 64 starts at (32 + i % 32) * 2^(floor(i / 32) - 1) and is 2^(floor(i / 32) - 1) wide.
const BUCKETS = 1024;
const counts = new Float64Array(BUCKETS);
let count = 0;
let max = 0;
let unstamped = 0;

function bucketOf(value) {
  if (value < 32) return value;
  if (value >= 2 ** 36) return BUCKETS - 1;
  const high = Math.floor(value / 4294967296);
  const exponent = high > 0 ? 63 - Math.clz32(high) : 31 - Math.clz32(value >>> 0);
  return (exponent - 5) * 32 + Math.floor(value / 2 ** (exponent - 5));
}
const lowerBound = (index) => (index < 64 ? index : (32 + (index % 32)) * 2 ** (Math.floor(index / 32) - 1));
const width = (index) => (index < 64 ? 1 : 2 ** (Math.floor(index / 32) - 1));

function record(value) {
  counts[bucketOf(value)] += 1;
  count += 1;
  if (value > max) max = value;
}

function quantile(q) {
  if (count === 0) return 0;
  const rank = Math.max(1, Math.ceil(q * count));
  let running = 0;
  for (let index = 0; index < BUCKETS; index++) {
    running += counts[index];
    if (running >= rank) return Math.min(lowerBound(index) + width(index) - 1, max);
  }
  return max;
}

function fractionBelow(threshold) {
  if (count === 0) return 0;
  let below = 0;
  for (let index = 0; index < BUCKETS; index++) {
    if (counts[index] === 0) continue;
    const lower = lowerBound(index);
    if (lower + width(index) <= threshold) below += counts[index];
    else if (lower < threshold) below += (counts[index] * (threshold - lower)) / width(index);
  }
  return below / count;
}

// As LatencySummary.microseconds: one decimal, rounded half up from whole nanoseconds.
function microseconds(nanoseconds) {
  const tenths = Math.floor((nanoseconds + 50) / 100);
  return `${Math.floor(tenths / 10)}.${tenths % 10}`;
}
const fraction = (value) => (Math.round(Math.min(1, Math.max(0, value)) * 10000) / 10000).toFixed(4);

const consumer = ActionCable.createConsumer(url);
let confirmed = 0;
let cpuStart = null;
let usageStart = null;

function finish() {
  const cpu = process.cpuUsage(cpuStart);
  const usage = process.resourceUsage();
  const voluntary = usage.voluntaryContextSwitches - usageStart.voluntaryContextSwitches;
  const involuntary = usage.involuntaryContextSwitches - usageStart.involuntaryContextSwitches;
  const seconds = ((cpu.user + cpu.system) / 1e6).toFixed(6);
  const thresholds = [["<50us", 50e3], ["<100us", 100e3], ["<250us", 250e3], ["<500us", 500e3], ["<1ms", 1e6],
    ["<10ms", 10e6]];
  const below = thresholds.map(([, threshold]) => fractionBelow(threshold));
  const shares = thresholds.map(([label], index) => `${label}:${fraction(below[index])}`);
  const rest = count > 0 ? 1 - below[below.length - 1] : 0;
  process.stdout.write(
    `latency count=${count} p50=${microseconds(quantile(0.5))} p99=${microseconds(quantile(0.99))} ` +
      `p999=${microseconds(quantile(0.999))} max=${microseconds(max)} cpu=${seconds} nvcsw=${voluntary} ` +
      `nivcsw=${involuntary}\ndist ${shares.join(" ")} >=10ms:${fraction(rest)}\n`);
  process.exit(count === expected && unstamped === 0 ? 0 : 1);
}

for (let index = 0; index < subscriptionCount; index++) {
  consumer.subscriptions.create({ channel: "BenchChannel", sub: index }, {
    connected() {
      confirmed += 1;
      if (confirmed === subscriptionCount) {
        usageStart = process.resourceUsage();
        cpuStart = process.cpuUsage();
      }
    },
    received(data) {
      const now = process.hrtime.bigint();
      if (data.end === true) return finish();
      if (!Number.isInteger(data.t)) {
        unstamped += 1;
        return;
      }
      const latency = Number(now - BigInt(data.t));
      record(latency > 0 ? latency : 0);
    },
  });
}
