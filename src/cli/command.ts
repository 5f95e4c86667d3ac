// What a subcommand of `sluice` is (main.ts loads each one when asked for).
export interface Command {
  /** One line for `sluice help`. */
  summary: string;
  /** Returns the exit code (a long-running command resolves when it stops). */
  run(argv: string[]): Promise<number>;
}
