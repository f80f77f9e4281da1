// The real MCP reference server (@modelcontextprotocol/server-everything,
// scripts/install-test-mcp.sh) on loopback, behind an HTTPS name of the
// test's own: a front with a leaf for that name records each body it passes
// on (what reached the server), and with x-test-json turns an event-stream
// answer into one JSON body (a server that answers in JSON).
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import type { Server } from 'node:https';
import { join } from 'node:path';
import type { LeafCache } from '../lib/tls/leaves.js';
import { freeLoopbackPort } from '../lib/util/free-port.js';
import { listen, requirement } from './helpers.js';

export const MCP_DIR = process.env.STASHBASE_TEST_MCP ?? '/var/cache/stashbase-test-mcp';
export const MCP_SERVER = join(MCP_DIR, 'node_modules', '@modelcontextprotocol', 'server-everything', 'dist', 'index.js');

export const needsMcpServer = () => requirement(existsSync(MCP_SERVER), `the MCP reference server is not installed in ${MCP_DIR} (run scripts/install-test-mcp.sh)`);

export interface McpFront {
  serverPort: number;
  frontPort: number;
  /** Every request that reached the server: its method and body. */
  reached: string[];
  close(): void;
}

export async function startMcpFront(leaves: LeafCache, name: string): Promise<McpFront> {
  const serverPort = await freeLoopbackPort();
  const server: ChildProcess = spawn(process.execPath, [MCP_SERVER, 'streamableHttp'], { env: { PATH: process.env.PATH, PORT: String(serverPort) }, stdio: ['ignore', 'pipe', 'pipe'] });
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('server-everything did not start')), 20_000);
    const seen = (d: Buffer) => {
      if (/listening on port/.test(String(d))) {
        clearTimeout(timer);
        resolve();
      }
    };
    server.stderr!.on('data', seen);
    server.stdout!.on('data', seen);
  });
  const reached: string[] = [];
  const leaf = leaves.get(name);
  const https = await import('node:https');
  const front: Server = https.createServer({ key: leaf.keyPem, cert: leaf.certPem }, (req, res) => {
    const parts: Buffer[] = [];
    req.on('data', (d: Buffer) => parts.push(d));
    req.on('end', () => {
      const body = Buffer.concat(parts);
      reached.push(`${req.method} ${body.toString()}`);
      const headers: Record<string, string | string[] | undefined> = { ...req.headers, host: `127.0.0.1:${serverPort}` };
      delete headers['x-test-json'];
      const up = httpRequest({ host: '127.0.0.1', port: serverPort, method: req.method, path: req.url, headers }, (u) => {
        if (req.headers['x-test-json'] === undefined) {
          res.writeHead(u.statusCode ?? 502, u.headers);
          u.pipe(res);
          return;
        }
        const got: Buffer[] = [];
        u.on('data', (d: Buffer) => got.push(d));
        u.on('end', () => {
          const data = Buffer.concat(got).toString().split('\n').filter((l) => l.startsWith('data: ')).map((l) => l.slice(6)).join('');
          res.writeHead(u.statusCode ?? 502, { 'content-type': 'application/json', ...(u.headers['mcp-session-id'] ? { 'mcp-session-id': u.headers['mcp-session-id'] } : {}) });
          res.end(data);
        });
      });
      up.on('error', () => res.destroy());
      up.end(body);
    });
  });
  const frontPort = await listen(front as never);
  return {
    serverPort, frontPort, reached,
    close: () => {
      server.kill();
      front.close();
    },
  };
}
