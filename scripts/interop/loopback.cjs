// Preloaded into Node (NODE_OPTIONS=--require) by scripts/interop.sh for the reference server's
// Streamable HTTP mode: every server socket opened without a host is bound to 127.0.0.1 (not
// all interfaces), and once it listens the real address is printed to stderr as
// "listening on http://127.0.0.1:PORT/mcp", so the script can start it with PORT=0 and learn
// the port the kernel picked (the server itself only echoes the PORT it was given).
"use strict";
const net = require("node:net");
const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
  const first = args[0];
  if (args.length === 0 || typeof first === "function") {
    args.unshift(0, "127.0.0.1");
  } else if (typeof first === "number" || (typeof first === "string" && /^\d+$/.test(first))) {
    if (typeof args[1] !== "string") args.splice(1, 0, "127.0.0.1");
  } else if (first && typeof first === "object" && !("path" in first) && !("fd" in first) && !first.host) {
    args[0] = { ...first, host: "127.0.0.1" };
  }
  this.once("listening", () => {
    const a = this.address();
    if (a && typeof a === "object") process.stderr.write(`listening on http://${a.address}:${a.port}/mcp\n`);
  });
  return listen.apply(this, args);
};
