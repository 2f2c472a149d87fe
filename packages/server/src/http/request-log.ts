// One log line per request, when it completes. The route pattern, never the URL: pay-page URLs carry
// access tokens. No headers and no bodies, so keys and card numbers cannot reach the log.
import { type FastifyReply, type FastifyRequest, LogController } from 'fastify';

export class RequestLog extends LogController {
  constructor() {
    super({ requestIdLogLabel: 'request_id' });
  }

  override incomingRequest(): void {}

  override requestCompleted(
    _error: Error | null | undefined,
    request: FastifyRequest,
    reply: FastifyReply,
  ): void {
    logRequest(request, reply, reply.elapsedTime);
  }
}

export function logRequest(request: FastifyRequest, reply: FastifyReply, ms: number) {
  reply.log.info(
    {
      request_id: request.id,
      method: request.method,
      route: request.routeOptions.url ?? '(no route)',
      status: reply.statusCode,
      ms: Math.round(ms * 100) / 100,
    },
    'request',
  );
}
