// The host the browser bundle of @rails/actioncable (Debian's ruby-actioncable) expects, under node with the
// `ws` package (Debian's node-ws) as its WebSocket; shared by cable-bench.js and cable-latency.js.
"use strict";

globalThis.self = globalThis;
globalThis.WebSocket = require("/usr/share/nodejs/ws");
globalThis.document = { visibilityState: "visible" };
globalThis.addEventListener = () => {};
globalThis.removeEventListener = () => {};
module.exports = require("/usr/share/nodejs/@rails/actioncable/app/assets/javascripts/action_cable.js");
