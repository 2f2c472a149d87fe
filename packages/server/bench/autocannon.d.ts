// The part of autocannon's API the benchmark uses (the package ships no types).
declare module 'autocannon' {
  /** One request as autocannon builds it; setupRequest answers it changed, before each send. */
  export interface RequestParams {
    method?: string;
    path?: string;
    headers?: Record<string, string>;
    body?: string;
    setupRequest?: (request: RequestParams, context: Record<string, unknown>) => RequestParams;
  }

  export interface Options {
    url: string;
    connections?: number;
    duration?: number;
    /** Requests to send in all, instead of a duration. */
    amount?: number;
    method?: 'GET' | 'POST' | 'PUT' | 'DELETE' | 'PATCH';
    headers?: Record<string, string>;
    body?: string;
    timeout?: number;
    title?: string;
    /** Sent in turn by each connection, each built on the options above. */
    requests?: RequestParams[];
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
    p97_5: number;
    p99: number;
  }

  export interface Result {
    title?: string;
    url: string;
    duration: number;
    errors: number;
    timeouts: number;
    non2xx: number;
    resets: number;
    '2xx': number;
    statusCodeStats: Record<string, { count: number }>;
    latency: Histogram;
    requests: Histogram & { sent: number };
    throughput: Histogram;
  }

  export default function autocannon(options: Options): Promise<Result>;
}
