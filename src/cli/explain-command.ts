// `sluice explain`: what the gateway would do with a sample request, and why.
// From a config file (its routes, rules and keys; no running instance needed)
// or from a running instance's admin API (GET /explain: the rule store's
// rules, overrides and keys as that instance holds them, and each bucket's
// state now). Text for a person by default, `--format json` for scripts.
import { type Explanation, explainSample } from '../explain/explain.js';
import { renderText } from '../explain/render.js';
import { parseSample, type SampleRequest, sampleQuery } from '../explain/sample.js';
import { resolversFor } from '../rules/resolvers.js';
import { AdminClient, DEFAULT_ADMIN_URL } from './admin-client.js';
import { type CliIo, parseDeclaredArgs, processIo, runCli, UsageError } from './cli-io.js';
import type { Command } from './command.js';
import { configFileFrom, loadConfigOrReport } from './config-arg.js';

const USAGE = `usage: sluice explain (--config FILE | --admin URL [--token T]) --path /x [options]
  --method M        the request method (default GET)
  --path P          the request target, e.g. /orders/42?x=1 (required)
  --host H          the Host header
  --header 'N: v'   a request header; repeat for more (X-Api-Key, X-Forwarded-For...)
  --ip A            the connecting peer's address (X-Forwarded-For is read only from a trusted proxy)
  --format F        text (default) or json
  --config FILE     explain from a config file (default $SLUICE_CONFIG or sluice.yaml)
  --admin URL       explain on a running instance (token: --token or SLUICE_ADMIN_TOKEN)
`;

const OPTIONS = {
  config: { type: 'string', short: 'c' },
  admin: { type: 'string' },
  token: { type: 'string' },
  method: { type: 'string' },
  path: { type: 'string' },
  host: { type: 'string' },
  header: { type: 'string', multiple: true },
  ip: { type: 'string' },
  format: { type: 'string' },
} as const;

export const command: Command = {
  summary: 'explain what the gateway does with a sample request: the route, the tenant, each limit, its key and bucket (--config FILE or --admin URL)',
  run: (argv) => run(argv),
};

export function run(argv: string[], io: CliIo = processIo): Promise<number> {
  return runCli(io, USAGE, async () => {
    const values = optionsOf(argv);
    const format = values.format ?? 'text';
    if (format !== 'text' && format !== 'json') throw new UsageError('--format must be text or json');
    if (values.admin !== undefined && values.config !== undefined) throw new UsageError('give --config FILE or --admin URL, not both');
    const sample = sampleOf(values);
    const explanation = values.admin !== undefined ? await fromAdmin(values.admin, values.token ?? io.env.SLUICE_ADMIN_TOKEN, sample) : await fromConfig(configFileFrom(values.config), sample);
    if (explanation === undefined) return 2;
    if (format === 'json') io.out(`${JSON.stringify(explanation, null, 2)}\n`);
    else io.out(renderText(explanation) + (values.admin === undefined ? '\n(from the config file alone: --admin URL shows the rule store\'s rules, overrides, keys and each bucket now)\n' : ''));
    return 0;
  });
}

function optionsOf(argv: string[]) {
  return parseDeclaredArgs(argv, OPTIONS);
}

/** The sample from the options; a bad one is a usage error naming its option. */
function sampleOf(values: ReturnType<typeof optionsOf>): SampleRequest {
  try {
    return parseSample({ method: values.method, path: values.path, host: values.host, header: values.header, ip: values.ip });
  } catch (error) {
    const field = (error as { field?: string }).field ?? '';
    const message = (error as Error).message.slice(field.length + 2);
    throw new UsageError(`--${field.replace(/\[(\d+)\]$/, (_all, i: string) => ` #${Number(i) + 1}`)} ${message}`);
  }
}

async function fromConfig(file: string, sample: SampleRequest): Promise<Explanation | undefined> {
  const config = loadConfigOrReport(file);
  if (!config) return undefined;
  const { rules, tenants } = resolversFor(config);
  // A route's verifier is built from its auth: as the gateway builds it (a jwksUrl is fetched now, within auth.jwks.timeoutMs).
  return explainSample({ config, rules, tenants, ruleStore: false }, sample);
}

function fromAdmin(url: string, token: string | undefined, sample: SampleRequest): Promise<Explanation> {
  return new AdminClient(url || DEFAULT_ADMIN_URL, token).call<Explanation>('GET', `/explain?${sampleQuery(sample)}`);
}
