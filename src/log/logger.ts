/**
 * Builds the process logger. Only src/cmd calls this; everything else receives a pino Logger
 * (or a child of one) through its options, so tests can capture or silence logs.
 */
import { pino, type Logger, type DestinationStream } from 'pino';

export type { Logger } from 'pino';

export interface LoggerOptions {
  level?: string;
  name?: string;
  destination?: DestinationStream;
}

/** Fields that must never reach a log line (tokens, keys, client certificates). */
const REDACT = ['req.headers.authorization', 'token', 'privateKeyPem', 'keyPem', '*.token', 'status.token'];

export function createLogger(opts: LoggerOptions = {}): Logger {
  return pino(
    { level: opts.level ?? 'info', name: opts.name ?? 'kube-identity', redact: REDACT },
    opts.destination,
  );
}

/** A logger that drops everything: the default for library code under test. */
export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}
