// loadfloor.js is the Node floor of session/load (BenchmarkTableLoad10k):
// for each request line on stdin, {"id":N,"params":{"sessionId":S,"path":P}},
// it reads the session log P, JSON.parse's every line and writes every
// stored update as a newline-delimited JSON-RPC session/update
// notification to stdout (in writes of about 64 KiB, as acpd writes its
// replay), then the reply {"jsonrpc":"2.0","id":N,"result":{}}. It merges
// nothing and checks nothing beyond the JSON: the whole job a replay does,
// at its cheapest in Node.
'use strict';
const fs = require('fs');

function load(id, sessionId, path) {
  const lines = fs.readFileSync(path, 'utf8').split('\n');
  let out = '';
  for (const line of lines) {
    if (line === '') continue;
    const rec = JSON.parse(line);
    if (rec.kind !== 'update') continue;
    out += JSON.stringify({jsonrpc: '2.0', method: 'session/update', params: {sessionId, update: rec.data}}) + '\n';
    if (out.length >= 65536) {
      fs.writeSync(1, out);
      out = '';
    }
  }
  fs.writeSync(1, out + JSON.stringify({jsonrpc: '2.0', id, result: {}}) + '\n');
}

let pending = '';
process.stdin.setEncoding('utf8');
process.stdin.on('data', (s) => {
  pending += s;
  let nl;
  while ((nl = pending.indexOf('\n')) >= 0) {
    const req = JSON.parse(pending.slice(0, nl));
    pending = pending.slice(nl + 1);
    load(req.id, req.params.sessionId, req.params.path);
  }
});
