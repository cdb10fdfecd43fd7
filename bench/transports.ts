import axios, { type AxiosAdapter } from 'axios';
import http from 'node:http';
import {
  Agent,
  fetch as undiciFetch,
  request as undiciRequest,
  Request as UndiciRequest,
  Response as UndiciResponse,
} from 'undici';
import { upstreamAdapter } from '../src/clients/http-adapter';
import { identityPaths } from '../src/clients/identity/urls';
import { announce, benchFile, serve, startChild } from './child';

/*
 * `npx tsx bench/transports.ts [--seconds 4] [--rounds 3]`: the measurement behind the upstream
 * client's transport (CHANGELOG.md, 2026-11-25; docs/decisions.md "Speed work"). The client
 * alone, no inbound server: each candidate makes the profile read from bench/upstreams.ts in a loop, 50 calls in
 * flight, in its own process on CPU 0 (upstreams on CPU 1), and reports its CPU per call. Each
 * candidate's round runs right after a round of bare node:http, and the ratio to that round is
 * what is compared (median of the rounds, with their spread), so a machine that changes pace
 * between rounds moves both sides. undici is a devDependency for this file only.
 */

type Call = () => Promise<unknown>;

/** The upstream client's instance configuration (src/clients/http.ts), less the adapter. */
const clientConfig = {
  proxy: false as const,
  timeout: 10_000,
  responseType: 'text' as const,
  transformRequest: [(body: unknown) => body],
  transformResponse: [(body: unknown) => body],
  validateStatus: () => true,
  maxRedirects: 0,
  headers: { Accept: 'application/json' },
};
const keptAlive = () => new http.Agent({ keepAlive: true, keepAliveMsecs: 60_000, maxSockets: 128 });

/** The third candidate of the issue: an axios adapter over undici's `request`, with axios's adapter's headers. */
function undiciAdapter(dispatcher: Agent): AxiosAdapter {
  return async (config) => {
    const headers = config.headers.toJSON(true) as Record<string, string>;
    headers['User-Agent'] = `axios/${axios.VERSION}`;
    headers['Accept-Encoding'] = 'gzip, compress, deflate, br';
    const method = config.method!.toUpperCase() as 'GET' | 'POST';
    const res = await undiciRequest(config.url!, {
      method,
      headers,
      body: config.data as string | undefined,
      dispatcher,
      headersTimeout: config.timeout,
      bodyTimeout: config.timeout,
    });
    return {
      data: await res.body.text(),
      status: res.statusCode,
      statusText: '',
      headers: res.headers as never,
      config,
      request: null,
    };
  };
}

export const CANDIDATES = [
  'axios-http',
  'upstream-adapter',
  'axios-fetch-undici',
  'axios-undici-request',
  'undici-request',
] as const;

function transportCall(transport: string, url: string): Call {
  const viaAxios = (adapter: AxiosAdapter | 'http' | 'fetch', extra: object = {}): Call => {
    const instance = new axios.Axios({ ...clientConfig, adapter, httpAgent: keptAlive(), ...extra });
    return async () =>
      JSON.parse((await instance.request<string>({ method: 'GET', url, headers: {} })).data) as unknown;
  };
  switch (transport) {
    case 'node:http': {
      const agent = keptAlive();
      return () =>
        new Promise((resolve, reject) => {
          const request = http.get(url, { agent, headers: { Accept: 'application/json' } }, (response) => {
            let body = '';
            response.setEncoding('utf8');
            response.on('data', (chunk: string) => (body += chunk));
            response.on('end', () => resolve(JSON.parse(body)));
          });
          request.on('error', reject);
        });
    }
    case 'axios-http':
      return viaAxios('http');
    case 'upstream-adapter':
      return viaAxios(upstreamAdapter);
    case 'axios-fetch-undici': {
      // axios's fetch adapter hands undici's fetch its own Request, so undici's classes go with it.
      const env = { fetch: undiciFetch, Request: UndiciRequest, Response: UndiciResponse };
      return viaAxios('fetch', { env, fetchOptions: { dispatcher: new Agent({ connections: 128 }) } });
    }
    case 'axios-undici-request':
      return viaAxios(undiciAdapter(new Agent({ connections: 128 })));
    case 'undici-request': {
      const dispatcher = new Agent({ connections: 128 });
      return async () =>
        (await undiciRequest(url, { dispatcher, headers: { accept: 'application/json' } })).body.json();
    }
    default:
      throw new Error(`unknown transport ${transport}`);
  }
}

async function loop(call: Call, seconds: number, inFlight: number): Promise<number> {
  const until = Date.now() + seconds * 1000;
  let calls = 0;
  const before = process.cpuUsage();
  await Promise.all(
    Array.from({ length: inFlight }, async () => {
      while (Date.now() < until) {
        await call();
        calls++;
      }
    }),
  );
  const used = process.cpuUsage(before);
  return (used.user + used.system) / calls;
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

async function main(): Promise<void> {
  const arg = (name: string, fallback: number) =>
    Number(process.argv[process.argv.indexOf(name) + 1] ?? fallback) || fallback;
  const seconds = process.argv.includes('--seconds') ? arg('--seconds', 4) : 4;
  const rounds = process.argv.includes('--rounds') ? arg('--rounds', 3) : 3;
  const upstreams = await startChild<{ url: string }>(benchFile('upstreams.ts'), [], { cpus: '1' });
  const url = `${upstreams.ready.url}/idp${identityPaths.userGet}?uid=bench`;
  const measure = async (transport: string) => {
    const child = await startChild(__filename, ['--child', transport, url], { cpus: '0' });
    try {
      return await child.call<number>({ seconds });
    } finally {
      await child.stop();
    }
  };
  try {
    for (const candidate of CANDIDATES) {
      const ratios: number[] = [];
      const micros: number[] = [];
      const references: number[] = [];
      for (let round = 0; round < rounds; round++) {
        const reference = await measure('node:http');
        const own = await measure(candidate);
        references.push(reference);
        micros.push(own);
        ratios.push(own / reference);
      }
      const spread = (Math.max(...ratios) - Math.min(...ratios)) / median(ratios);
      process.stdout.write(
        `${candidate.padEnd(22)} ${median(micros).toFixed(0).padStart(4)} µs/call  node:http ${median(references).toFixed(0).padStart(3)} µs  ratio ${median(ratios).toFixed(2)}  spread ${(spread * 100).toFixed(0)}%${spread > 0.15 ? ' NOISY' : ''}\n`,
      );
    }
  } finally {
    await upstreams.stop();
  }
}

if (require.main === module) {
  if (process.argv[2] === '--child') {
    const call = transportCall(process.argv[3]!, process.argv[4]!);
    serve(async (command) => {
      // One unmeasured second: connections opened, code compiled.
      await loop(call, 1, 50);
      return loop(call, Number(command.seconds), 50);
    });
    announce({ pid: process.pid });
  } else {
    void main();
  }
}
