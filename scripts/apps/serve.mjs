// Serves the files of one folder on 127.0.0.1 (a free port), for the headless browser of
// scripts/apps-check.sh. Prints the port on its first line once it listens, so the script
// reads that line instead of waiting for a while.
//   node serve.mjs DIR
import { createServer } from "node:http";
import { readFile } from "node:fs/promises";
import { join, basename } from "node:path";

const dir = process.argv[2];
const types = { ".html": "text/html; charset=utf-8", ".json": "application/json" };
const server = createServer(async (req, res) => {
  // Only plain file names of DIR: no paths, no dot files.
  const name = basename(new URL(req.url, "http://x").pathname);
  const type = types[name.slice(name.lastIndexOf("."))];
  if (!type || name.startsWith(".")) { res.writeHead(404).end(); return; }
  try {
    const body = await readFile(join(dir, name));
    res.writeHead(200, { "content-type": type, "cache-control": "no-store" }).end(body);
  } catch {
    res.writeHead(404).end();
  }
});
server.listen(0, "127.0.0.1", () => console.log(server.address().port));
