// group-checkout serve: the service process (main.ts).
import type { Command } from './command.ts';

export const serve: Command = {
  name: 'serve',
  usage: '',
  // The server (Fastify, the routes, the workers) is loaded only to serve: the other commands start faster.
  run: async (_args, config) => (await import('../main.ts')).serve(config),
};
