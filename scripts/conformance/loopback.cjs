// Preloaded into Node (NODE_OPTIONS=--require) by scripts/conformance.sh: every server socket the
// conformance suite opens without naming a host is bound to 127.0.0.1 instead of all interfaces,
// so the run never listens beyond loopback.
//
// The suite's mock servers read `server.address().port` right after `listen(0)`, which works
// only because a listen without a host binds at once. A listen with a host looks the host up
// first (asynchronously, even for an IP literal), so while our listen runs, the lookup of the
// literal "127.0.0.1" answers synchronously and the bind stays immediate.
"use strict";
const net = require("node:net");
const dns = require("node:dns");
const LOOPBACK = "127.0.0.1";
const lookup = dns.lookup;
let binding = false;
dns.lookup = function (host, ...rest) {
  const callback = rest[rest.length - 1];
  if (binding && host === LOOPBACK && typeof callback === "function") {
    const all = rest.length > 1 && rest[0] && rest[0].all;
    if (all) callback(null, [{ address: LOOPBACK, family: 4 }]);
    else callback(null, LOOPBACK, 4);
    return {};
  }
  return lookup.call(this, host, ...rest);
};
const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
  const first = args[0];
  if (args.length === 0 || typeof first === "function") {
    args.unshift(0, LOOPBACK);
  } else if (typeof first === "number" || (typeof first === "string" && /^\d+$/.test(first))) {
    if (typeof args[1] !== "string") args.splice(1, 0, LOOPBACK);
  } else if (first && typeof first === "object" && !("path" in first) && !("fd" in first) && !first.host) {
    args[0] = { ...first, host: LOOPBACK };
  }
  binding = true;
  try {
    return listen.apply(this, args);
  } finally {
    binding = false;
  }
};
