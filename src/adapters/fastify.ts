// Sluice as a Fastify plugin: an onRequest hook that decides, sets the
// X-RateLimit-* headers and answers 429 (with Retry-After) when refused, 503
// when the store is down and the rule says closed.
// Registered without encapsulation, so it covers the routes of the scope it is
// registered in, like fastify-plugin would.
import type { FastifyInstance, FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { type AdapterOptions, createRequestLimiter, hold } from './limit.js';

export type { AdapterLimit, AdapterListEntry, ClientIpOption, KeyOf, LimitTarget } from './limit.js';
export type SluiceFastifyOptions = AdapterOptions<FastifyRequest>;

function setHeaders(reply: FastifyReply, headers: string[]): void {
  for (let i = 0; i < headers.length; i += 2) reply.header(headers[i]!, headers[i + 1]!);
}

const plugin = async (fastify: FastifyInstance, options: SluiceFastifyOptions) => {
  const limit = createRequestLimiter(options);
  fastify.addHook('onRequest', async (request, reply) => {
    const outcome = await limit(request, request.raw);
    switch (outcome.kind) {
      case 'skip':
        return;
      case 'answered':
        return reply.code(outcome.status).type('application/json').send(outcome.body);
      case 'refused': {
        setHeaders(reply, outcome.headers);
        if (!reply.hasHeader('content-type')) reply.type('application/json');
        return reply.code(outcome.status).send(outcome.body);
      }
      case 'allowed':
        setHeaders(reply, outcome.headers);
        // Once the response has gone (or the client left): the reservations of limits that settle.
        if (outcome.settle) reply.raw.once('close', () => void outcome.settle!(reply.raw.statusCode));
        if (outcome.delayMs > 0) await hold(outcome.delayMs);
    }
  });
};

// What fastify-plugin does: skip encapsulation so the hook reaches sibling routes.
Object.assign(plugin, { [Symbol.for('skip-override')]: true, [Symbol.for('fastify.display-name')]: 'sluice' });

export const sluiceFastify: FastifyPluginAsync<SluiceFastifyOptions> = plugin;
export default sluiceFastify;
