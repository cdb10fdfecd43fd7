import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gunzipSync } from 'node:zlib';

/*
 * An OTLP/HTTP traces receiver for tests: what a collector would get, decoded with the message
 * classes generated from the OpenTelemetry project's own protobuf definitions (opentelemetry-proto,
 * as @opentelemetry/otlp-transformer 0.52 shipped them, installed as `otlp-generated`), never
 * with the SDK's in-memory exporter: the test reads the wire format the service sends.
 */

// The generated module is plain CommonJS without types.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const root = require('otlp-generated/build/src/generated/root') as {
  opentelemetry: {
    proto: {
      collector: {
        trace: {
          v1: {
            ExportTraceServiceRequest: {
              decode(bytes: Uint8Array): unknown;
              toObject(message: unknown, options: object): DecodedRequest;
            };
            ExportTraceServiceResponse: { encode(message: object): { finish(): Uint8Array } };
          };
        };
      };
    };
  };
};
const { ExportTraceServiceRequest, ExportTraceServiceResponse } = root.opentelemetry.proto.collector.trace.v1;

interface DecodedValue {
  stringValue?: string;
  intValue?: string;
  boolValue?: boolean;
  doubleValue?: number;
}
interface DecodedKeyValue {
  key: string;
  value: DecodedValue;
}
interface DecodedSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes?: DecodedKeyValue[];
  events?: Array<{ name: string; attributes?: DecodedKeyValue[] }>;
  status?: { code?: number; message?: string };
}
interface DecodedRequest {
  resourceSpans?: Array<{
    resource?: { attributes?: DecodedKeyValue[] };
    scopeSpans?: Array<{ spans?: DecodedSpan[] }>;
  }>;
}

type AttributeValue = string | number | boolean;

/** One exported span, its ids in hex as `traceparent` writes them. */
export interface ExportedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string | undefined;
  name: string;
  kind: 'internal' | 'server' | 'client' | 'producer' | 'consumer' | 'unspecified';
  attributes: Record<string, AttributeValue>;
  events: Array<{ name: string; attributes: Record<string, AttributeValue> }>;
  failed: boolean;
  statusMessage: string | undefined;
  serviceName: AttributeValue | undefined;
}

const KINDS = ['unspecified', 'internal', 'server', 'client', 'producer', 'consumer'] as const;

const valueOf = (value: DecodedValue): AttributeValue =>
  value.stringValue ?? value.boolValue ?? value.doubleValue ?? Number(value.intValue);

const attributesOf = (list: DecodedKeyValue[] = []): Record<string, AttributeValue> =>
  Object.fromEntries(list.map(({ key, value }) => [key, valueOf(value)]));

const hex = (base64: string | undefined) =>
  base64 ? Buffer.from(base64, 'base64').toString('hex') || undefined : undefined;

export interface OtlpReceiver {
  /** The traces endpoint, for `tracing.otlp_url`. */
  readonly url: string;
  readonly spans: ExportedSpan[];
  /** The raw bodies received, as sent (for scans of every byte). */
  readonly bodies: Buffer[];
  close(): Promise<void>;
}

export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: ExportedSpan[] = [];
  const bodies: Buffer[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      if (
        req.method !== 'POST' ||
        req.url !== '/v1/traces' ||
        req.headers['content-type'] !== 'application/x-protobuf'
      ) {
        res.writeHead(415).end();
        return;
      }
      const raw = Buffer.concat(chunks);
      const body = req.headers['content-encoding'] === 'gzip' ? gunzipSync(raw) : raw;
      bodies.push(body);
      const decoded = ExportTraceServiceRequest.toObject(ExportTraceServiceRequest.decode(body), {
        longs: String,
        bytes: String,
        defaults: false,
      });
      for (const resourceSpans of decoded.resourceSpans ?? []) {
        const serviceName = attributesOf(resourceSpans.resource?.attributes)['service.name'];
        for (const scope of resourceSpans.scopeSpans ?? [])
          for (const span of scope.spans ?? [])
            spans.push({
              traceId: hex(span.traceId)!,
              spanId: hex(span.spanId)!,
              parentSpanId: hex(span.parentSpanId),
              name: span.name,
              kind: KINDS[span.kind] ?? 'unspecified',
              attributes: attributesOf(span.attributes),
              events: (span.events ?? []).map((e) => ({ name: e.name, attributes: attributesOf(e.attributes) })),
              failed: span.status?.code === 2,
              statusMessage: span.status?.message,
              serviceName,
            });
      }
      res.writeHead(200, { 'content-type': 'application/x-protobuf' });
      res.end(Buffer.from(ExportTraceServiceResponse.encode({}).finish()));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1/traces`,
    spans,
    bodies,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
