import { createLogger, type Logger } from '@tessera/common';

/**
 * The real service logger (same redaction and error serializers) writing to memory, so tests
 * can read exactly what would reach stdout.
 */
export function captureLogger(): { logger: Logger; text: () => string; lines: () => string[] } {
  const chunks: string[] = [];
  const logger = createLogger('edge-test', 'debug', { write: (line: string) => chunks.push(line) });
  const text = (): string => chunks.join('');
  return { logger, text, lines: () => text().split('\n').filter(Boolean) };
}
