// HTTP written byte for byte on a socket, for what fetch will not send: a broken %-escape in the URL, a
// Content-Length that lies, bytes that are not HTTP at all. The first response is answered in the shape
// of TestResponse, so the same assertions apply to it.
import { connect } from 'node:net';
import type { TestResponse } from './app.ts';

export interface RawRequest {
  method: string;
  /** Sent as is: no escaping, no normalization. */
  path: string;
  /** Host and Connection: close are added unless given; Content-Length too, when there is a body. */
  headers?: Record<string, string>;
  body?: string;
}

export interface RawResponse extends TestResponse {
  /** Everything the server sent before it closed the connection. */
  raw: string;
}

/** Sends `request` (a request to build, or the exact bytes) and answers the first response. */
export async function rawHttp(baseUrl: string, request: RawRequest | string): Promise<RawResponse> {
  const url = new URL(baseUrl);
  const bytes = typeof request === 'string' ? request : requestBytes(url.host, request);
  const raw = await new Promise<string>((resolve, reject) => {
    const socket = connect(Number(url.port), url.hostname);
    socket.setTimeout(10_000, () => socket.destroy(new Error('no answer within 10 s')));
    let text = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => {
      text += chunk;
    });
    socket.on('error', reject);
    socket.on('close', () => resolve(text));
    socket.write(bytes);
  });
  return parseResponse(raw);
}

function requestBytes(host: string, { method, path, headers = {}, body = '' }: RawRequest): string {
  const names = new Set(Object.keys(headers).map((name) => name.toLowerCase()));
  const all: [string, string][] = [];
  if (!names.has('host')) all.push(['Host', host]);
  all.push(...Object.entries(headers));
  if (body && !names.has('content-length')) all.push(['Content-Length', String(Buffer.byteLength(body))]);
  if (!names.has('connection')) all.push(['Connection', 'close']);
  const head = all.map(([name, value]) => `${name}: ${value}\r\n`).join('');
  return `${method} ${path} HTTP/1.1\r\n${head}\r\n${body}`;
}

/** The first response in `raw`: status line, headers, and a body of Content-Length bytes (or the rest). */
function parseResponse(raw: string): RawResponse {
  const end = raw.indexOf('\r\n\r\n');
  if (end < 0) throw new Error(`no HTTP response in ${JSON.stringify(raw.slice(0, 200))}`);
  const [statusLine = '', ...lines] = raw.slice(0, end).split('\r\n');
  const status = /^HTTP\/1\.[01] (\d{3})( |$)/.exec(statusLine)?.[1];
  if (!status) throw new Error(`not an HTTP status line: ${JSON.stringify(statusLine)}`);
  const headers = new Headers();
  for (const line of lines) {
    const colon = line.indexOf(':');
    if (colon > 0) headers.append(line.slice(0, colon).trim(), line.slice(colon + 1).trim());
  }
  const rest = Buffer.from(raw.slice(end + 4), 'utf8');
  const length = headers.get('content-length');
  const text = (length === null ? rest : rest.subarray(0, Number(length))).toString('utf8');
  let body: unknown;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    body = undefined;
  }
  return { status: Number(status), headers, body, text, raw };
}
