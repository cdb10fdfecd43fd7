/* The part of autocannon 9's programmatic API the benchmark uses (the package ships no types). */
declare module 'autocannon' {
  import type { EventEmitter } from 'node:events';

  export interface Request {
    method?: string;
    path?: string;
    headers?: Record<string, string>;
    body?: string;
    /** Returns the request to send; `context` lives per connection and is reset when the list starts over. */
    setupRequest?: (request: Request, context: Record<string, string>) => Request;
    onResponse?: (
      status: number,
      body: string,
      context: Record<string, string>,
      headers: Record<string, string>,
    ) => void;
  }

  export interface Options {
    url: string;
    connections?: number;
    duration?: number;
    warmup?: { connections?: number; duration?: number };
    headers?: Record<string, string>;
    requests?: Request[];
    timeout?: number;
    verifyBody?: (body: string) => boolean;
  }

  export interface Histogram {
    average: number;
    mean: number;
    stddev: number;
    min: number;
    max: number;
    total: number;
    p50: number;
    p90: number;
    p99: number;
  }

  export interface Result {
    duration: number;
    errors: number;
    timeouts: number;
    mismatches: number;
    non2xx: number;
    latency: Histogram;
    requests: Histogram;
  }

  export default function autocannon(
    options: Options,
    callback: (err: Error | null, result: Result) => void,
  ): EventEmitter;
}
