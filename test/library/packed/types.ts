// Compiled by the packed test with TypeScript's node10 resolution (typesVersions), node16 and nodenext, as a CommonJS file.
import { createEngine, type Engine, parseRule } from 'sluice';
import { sluiceExpress } from 'sluice/express';
import { sluiceFastify } from 'sluice/fastify';

const engine: Engine = createEngine({});
export const middleware = sluiceExpress({ engine, rule: parseRule({ policy: 'gcra', capacity: 5, refillPerSecond: 1 }), key: 'ip' });
export const plugin = sluiceFastify;
