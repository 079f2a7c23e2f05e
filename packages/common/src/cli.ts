import { parseArgs, type ParseArgsConfig } from 'node:util';
import { ConfigError } from './config';

/**
 * Plumbing shared by the operator CLIs (keys, admin, vault) so they agree on exit codes:
 * 0 done, 1 failed, 2 usage (EX_USAGE-like), 78 bad configuration (EX_CONFIG).
 */
export const EXIT_USAGE = 2;
export const EXIT_CONFIG = 78;

/** A mistake in the command line; reported with the usage text. */
export class UsageError extends Error {}

export interface CliIo {
  out: (line: string) => void;
  err: (line: string) => void;
}

/**
 * A CLI's entry point, for `if (require.main === module)`: lines to stdout and stderr, the exit
 * code `run` answers, and an unexpected failure as one line (its message, never a stack). `env`
 * is process.env, read in the CLI's own file where the lint allows it.
 */
export function runCliMain(run: (argv: string[], env: NodeJS.ProcessEnv, io: CliIo) => Promise<number>, env: NodeJS.ProcessEnv): void {
  run(process.argv.slice(2), env, {
    out: (line) => process.stdout.write(line + '\n'),
    err: (line) => process.stderr.write(line + '\n'),
  }).then(
    (code) => process.exit(code),
    (err: unknown) => {
      process.stderr.write(`failed: ${err instanceof Error ? err.message : String(err)}\n`);
      process.exit(1);
    },
  );
}

/** Turns a UsageError into its exit code after printing it with the usage text; rethrows the rest. */
export function reportUsageError(err: unknown, usage: string, io: CliIo): number {
  if (!(err instanceof UsageError)) throw err;
  io.err(`${err.message}\n\n${usage}`);
  return EXIT_USAGE;
}

/** Parses configuration for a CLI: every problem is printed and the exit code returned instead of thrown. */
export function parseCliConfig<T>(parse: () => T, io: CliIo, prefix = ''): { ok: true; config: T } | { ok: false; exitCode: number } {
  try {
    return { ok: true, config: parse() };
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    io.err(`${prefix}${err.message}`);
    return { ok: false, exitCode: EXIT_CONFIG };
  }
}

type CommandLineConfig<O extends ParseArgsConfig['options']> = { args: string[]; options: O; allowPositionals: true; strict: true };

/**
 * The command line as every operator CLI takes it (positionals allowed, unknown options refused),
 * or the usage exit code once the reason and the usage text are printed.
 */
export function parseCommandLine<O extends ParseArgsConfig['options']>(
  argv: string[],
  options: O,
  usage: string,
  io: CliIo,
): { ok: true; args: ReturnType<typeof parseArgs<CommandLineConfig<O>>> } | { ok: false; exitCode: number } {
  try {
    return { ok: true, args: parseArgs<CommandLineConfig<O>>({ args: argv, options, allowPositionals: true, strict: true }) };
  } catch (err) {
    io.err(`${err instanceof Error ? err.message : String(err)}\n\n${usage}`);
    return { ok: false, exitCode: EXIT_USAGE };
  }
}

/**
 * The command line of a CLI with subcommands (`npm run keys -- create …`): `help`, `--help` or no
 * command print the usage (to stderr with exit 2 when nothing was asked, to stdout with 0 when help
 * was), an unknown command is refused with the usage; otherwise the parsed arguments and the command.
 */
export function parseSubcommandLine<O extends ParseArgsConfig['options']>(
  argv: string[],
  options: O,
  usage: string,
  io: CliIo,
  commands: readonly string[],
): { ok: true; args: ReturnType<typeof parseArgs<CommandLineConfig<O>>>; command: string } | { ok: false; exitCode: number } {
  const parsed = parseCommandLine(argv, options, usage, io);
  if (!parsed.ok) return parsed;
  const command = parsed.args.positionals[0];
  const helpAsked = (parsed.args.values as { help?: boolean }).help === true || command === 'help';
  if (helpAsked || command === undefined) {
    (helpAsked ? io.out : io.err)(usage);
    return { ok: false, exitCode: helpAsked ? 0 : EXIT_USAGE };
  }
  if (!commands.includes(command)) {
    io.err(`Unknown command "${command}".\n\n${usage}`);
    return { ok: false, exitCode: EXIT_USAGE };
  }
  return { ok: true, args: parsed.args, command };
}
