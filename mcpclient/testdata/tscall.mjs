// The floor of BenchmarkTableMCPCall: the MCP TypeScript client
// (@modelcontextprotocol/sdk) calling server-everything's echo tool over
// stdio directly.
//
// Usage: node tscall.mjs NODE_MODULES SERVER_ENTRY
//
// It connects, lists the tools and prints "ready"; then for every line N
// it reads on stdin it makes N echo calls one after the other and prints
// the nanoseconds they took. At the end of its input it closes the client.
import { pathToFileURL } from 'node:url';
import { createInterface } from 'node:readline';

const [modules, entry] = process.argv.slice(2);
const sdk = (p) => import(pathToFileURL(`${modules}/@modelcontextprotocol/sdk/dist/esm/${p}`).href);
const { Client } = await sdk('client/index.js');
const { StdioClientTransport } = await sdk('client/stdio.js');

const client = new Client({ name: 'acpd-bench-floor', version: '1.0.0' });
await client.connect(new StdioClientTransport({
  command: process.execPath,
  args: [entry, 'stdio'],
  stderr: 'ignore',
}));
await client.listTools();
process.stdout.write('ready\n');

for await (const line of createInterface({ input: process.stdin })) {
  const n = Number(line);
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < n; i++) {
    const res = await client.callTool({ name: 'echo', arguments: { message: 'x' } });
    if (res.isError) {
      throw new Error(`echo failed: ${JSON.stringify(res)}`);
    }
  }
  process.stdout.write(`${process.hrtime.bigint() - t0}\n`);
}
await client.close();
