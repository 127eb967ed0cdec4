import { BankApiError } from '../client/transport.ts'
import type { CommandSpec } from './command-spec.ts'

// A refusal names request fields as the wire has them (`permissions.1`, `expires_in_seconds`);
// on the command line they were flags (`--permissions`, `--expires-in`). The CLI says both:
// the message names the flags, and each of `details` keeps its `field` and gains its `flag`.

/** The flag or word a field path was given as: `permissions.1` → `--permissions (item 2)`. */
export function flagOf(spec: CommandSpec, path: string): string | undefined {
  const [head = '', ...rest] = path.split('.')
  const flag = spec.flags.find((f) => f.field === head)
  const positional = spec.positionals.find((p) => p.field === head)
  const choice = spec.choices.find((c) => c.field === head)
  let shown: string
  if (flag) shown = `--${flag.word}`
  else if (positional) shown = `<${positional.word}>`
  else if (choice) shown = choice.options.map((o) => `--${o.flag}`).join(' or ')
  else return undefined
  if (rest.length === 0) return shown
  const [first = '', ...inner] = rest
  const item = /^\d+$/.test(first) ? [`item ${Number(first) + 1}`, ...inner] : rest
  return `${shown} (${item.join(', ')})`
}

/** The bank's refusal as the CLI prints it: field paths named as the flags that gave them. */
export function withFlagNames(error: BankApiError, spec: CommandSpec): BankApiError {
  let message = error.message
  const details = error.details.map((detail) => {
    const field: unknown = detail?.field
    if (typeof field !== 'string') return detail
    const flag = flagOf(spec, field)
    if (flag === undefined) return detail
    // The field as the message names it: after `invalid request: `, `; `, or at the start.
    const named = new RegExp(`(^|: |; )${field.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}(?=[ :])`, 'g')
    message = message.replace(named, (_, before: string) => `${before}${flag}`)
    return { ...detail, flag }
  })
  return new BankApiError(error.code, error.type, message, details)
}
