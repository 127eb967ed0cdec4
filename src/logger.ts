import { pino, type Logger } from 'pino'

export type { Logger }

// Structured JSON logs. Secrets never reach a log line: request bodies are not logged,
// and these paths are redacted in case an object carrying them is logged by mistake.
export function createLogger(level: string): Logger {
  return pino({
    level,
    base: { service: 'partner-bank' },
    timestamp: pino.stdTimeFunctions.isoTime,
    redact: {
      paths: ['token', '*.token', 'otp', '*.otp', 'secret', '*.secret', 'headers.token',
        'headers.authorization'],
      censor: '[redacted]',
    },
  })
}
