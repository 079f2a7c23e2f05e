import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { waitFor } from './wait';

/** The repository root, from src/ and from dist/ alike. */
export const ROOT = path.resolve(__dirname, '../../..');

export interface ManagedProcessOptions {
  /**
   * The process writes straight to this file and its output is not kept in memory. The bench
   * uses it: output piped through the load generator would add to the CPU it measures.
   */
  logFile?: string;
  /** Called with every complete line the process writes (npm start prefixes and prints them). */
  onLine?: (line: string) => void;
  /** false: `output` stays empty, so a long-running stack (npm start) does not grow without bound. */
  keepOutput?: boolean;
  /** Called when the process ends without stop() having been asked for (a crash, not a shutdown). */
  onUnexpectedExit?: (code: number | null, signal: NodeJS.Signals | null) => void;
}

/**
 * A child process whose output is kept in memory (or written to a log file), with the waits and
 * the stop every launcher needs: wait for a line, a signal, a graceful stop with a SIGKILL
 * fallback.
 */
export class ManagedProcess {
  output = '';
  private child: ChildProcess | undefined;
  private exited: Promise<void> = Promise.resolve();
  private stopRequested = false;

  constructor(
    readonly name: string,
    readonly command: string,
    readonly args: string[],
    readonly env: NodeJS.ProcessEnv,
    readonly options: ManagedProcessOptions = {},
  ) {}

  start(): this {
    const { logFile, onLine, onUnexpectedExit } = this.options;
    this.stopRequested = false;
    let child: ChildProcess;
    if (logFile !== undefined) {
      fs.mkdirSync(path.dirname(logFile), { recursive: true });
      const fd = fs.openSync(logFile, 'w');
      child = spawn(this.command, this.args, { cwd: ROOT, env: this.env, stdio: ['ignore', fd, fd] });
      fs.closeSync(fd);
    } else {
      child = spawn(this.command, this.args, { cwd: ROOT, env: this.env, stdio: ['ignore', 'pipe', 'pipe'] });
      for (const stream of [child.stdout, child.stderr]) {
        let partial = '';
        stream?.on('data', (chunk: Buffer) => {
          const text = chunk.toString('utf8');
          if (this.capturesOutput) this.output += text;
          if (!onLine) return;
          const lines = (partial + text).split('\n');
          partial = lines.pop() ?? '';
          for (const line of lines) onLine(line);
        });
      }
    }
    this.child = child;
    this.exited = new Promise((resolve) =>
      child.once('exit', (code, signal) => {
        if (!this.stopRequested) onUnexpectedExit?.(code, signal);
        resolve();
      }),
    );
    return this;
  }

  /** The OS process id, e.g. to read /proc/<pid>/status; undefined before start(). */
  get pid(): number | undefined {
    return this.child?.pid;
  }

  get running(): boolean {
    return this.child !== undefined && this.child.exitCode === null && this.child.signalCode === null;
  }

  /** False with `logFile` or without `keepOutput`: waitForOutput cannot see the output, wait for a port instead. */
  get capturesOutput(): boolean {
    return this.options.logFile === undefined && this.options.keepOutput !== false;
  }

  async waitForOutput(text: string, timeoutMs = 15_000): Promise<void> {
    if (!this.capturesOutput) throw new Error(`the output of ${this.name} is not kept: wait for its port instead`);
    const from = this.output.length;
    try {
      await waitFor(
        () => {
          if (!this.running) throw new Error(`${this.name} exited early:\n${this.output}`);
          return this.output.includes(text, Math.max(0, from - text.length));
        },
        `${this.name} to print "${text}"`,
        timeoutMs,
      );
    } catch (err) {
      throw new Error(`${(err as Error).message}\n--- ${this.name} output ---\n${this.output.slice(-4000)}`);
    }
  }

  /**
   * Lets the Node process that started it exit while it runs (with `logFile` no pipe ties them
   * together); whoever keeps its pid stops it later.
   */
  unref(): void {
    this.child?.unref();
  }

  /** Sends a signal and returns at once (SIGSTOP/SIGCONT to pause a process, SIGTERM to watch a drain). */
  signal(signal: NodeJS.Signals): void {
    if (this.running) this.child?.kill(signal);
  }

  /** Resolves when the process has exited, with its exit code (null when a signal ended it). */
  async exit(): Promise<number | null> {
    await this.exited;
    return this.child?.exitCode ?? null;
  }

  /** Sends `signal` (SIGTERM: a graceful shutdown) and SIGKILL if the process is still there after `graceMs`. */
  async stop(signal: NodeJS.Signals = 'SIGTERM', graceMs = 5_000): Promise<void> {
    this.stopRequested = true;
    if (!this.running) return;
    this.child?.kill(signal);
    const timer = setTimeout(() => this.child?.kill('SIGKILL'), graceMs);
    await this.exited;
    clearTimeout(timer);
  }
}
