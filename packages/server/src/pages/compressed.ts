// A file the pages plugin serves from memory (the pages' assets, the SDK's builds): compressed with brotli
// and gzip the first time a client asks for that encoding, kept, and answered in the encoding the client
// accepts, or 304 when it has it already. One weak ETag for all three bodies: they are the same file.
// Compressing on first use rather than at start-up keeps brotli at its best quality (the files are cached
// for a year) off the start of every process that never serves them
// (docs/decisions.md#assets-compressed-on-first-use).
import { createHash } from 'node:crypto';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';
import type { FastifyReply, FastifyRequest } from 'fastify';

type Encoding = 'identity' | 'gzip' | 'br';

export interface Compressed {
  etag: string;
  /** The file in `encoding`, compressed on the first call for it and kept. */
  body(encoding: Encoding): Buffer;
}

export function compress(identity: Buffer): Compressed {
  const bodies: Partial<Record<Encoding, Buffer>> = { identity };
  const make: Record<Encoding, () => Buffer> = {
    identity: () => identity,
    gzip: () => gzipSync(identity, { level: 9 }),
    br: () => brotliCompressSync(identity, { params: { [constants.BROTLI_PARAM_QUALITY]: 11 } }),
  };
  return {
    etag: `W/"${createHash('sha256').update(identity).digest('base64url').slice(0, 27)}"`,
    body(encoding) {
      bodies[encoding] ??= make[encoding]();
      return bodies[encoding];
    },
  };
}

/** br when accepted, else gzip, else none: by q-value presence only (q=0 refuses), as browsers send them. */
function encodingFor(acceptEncoding: string | undefined): Encoding {
  const accepted = new Set<string>();
  for (const part of (acceptEncoding ?? '').toLowerCase().split(',')) {
    const [name, ...params] = part.trim().split(';');
    const q = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    if (name && !(q && Number(q.slice(2)) === 0)) accepted.add(name.trim());
  }
  if (accepted.has('br')) return 'br';
  if (accepted.has('gzip') || accepted.has('*')) return 'gzip';
  return 'identity';
}

/** Whether If-None-Match names this ETag (weak comparison, RFC 9110 §13.1.2). */
function notModified(ifNoneMatch: string | undefined, etag: string): boolean {
  if (!ifNoneMatch) return false;
  const strip = (tag: string) => tag.trim().replace(/^W\//, '');
  return ifNoneMatch.trim() === '*' || ifNoneMatch.split(',').some((tag) => strip(tag) === strip(etag));
}

/** Answers `file` to `request`: 304 when its ETag matches, else the body in the best accepted encoding. */
export function sendCompressed(request: FastifyRequest, reply: FastifyReply, file: Compressed) {
  reply.header('etag', file.etag).header('vary', 'Accept-Encoding');
  if (notModified(request.headers['if-none-match'], file.etag)) return reply.code(304).send();
  const encoding = encodingFor(request.headers['accept-encoding']);
  if (encoding !== 'identity') reply.header('content-encoding', encoding);
  return reply.send(file.body(encoding));
}
