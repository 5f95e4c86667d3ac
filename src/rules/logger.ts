// The logging the rules layer needs; a pino logger fits as is.
export interface RulesLogger {
  info(details: object, message: string): void;
  warn(details: object, message: string): void;
  error(details: object, message: string): void;
}

export const silentLogger: RulesLogger = { info() {}, warn() {}, error() {} };

/** JSON lines on stderr, for when no logger is given. */
export const stderrLogger: RulesLogger = {
  info: (details, message) => write('info', details, message),
  warn: (details, message) => write('warn', details, message),
  error: (details, message) => write('error', details, message),
};

function write(level: string, details: object, message: string): void {
  process.stderr.write(`${JSON.stringify({ level, time: new Date().toISOString(), msg: message, ...details })}\n`);
}

export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
