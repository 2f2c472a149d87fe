// The type of the Fastify instance the app is built on, apart from buildApp (app.ts) so that the surfaces
// registered on it (api/, pages/) name it without importing the file that imports them.
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyBaseLogger, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

export type App = FastifyInstance<
  Server,
  IncomingMessage,
  ServerResponse,
  FastifyBaseLogger,
  TypeBoxTypeProvider
>;

/**
 * The paths that answer in pages (hosted pages, dashboard), by prefix: a request the router refuses before
 * any route (a broken %-escape) under one of them is answered by that surface's error handler, as a page;
 * under any other path, in JSON.
 */
export interface PageSurfaces {
  add(prefix: string, handle: (error: Error, request: FastifyRequest, reply: FastifyReply) => unknown): void;
}
