import type { BankClient } from '../../src/client/index.ts'

// Request bodies only the user tests need. The shared assertions live in test/support.

type CreateBody = Parameters<BankClient['users']['create']>[0]
type UpdateBody = Parameters<BankClient['users']['update']>[0]

/** Sends a body the SDK's types would refuse, to see the service refuse it too. */
export function asCreate(body: Record<string, unknown>): CreateBody {
  return body as unknown as CreateBody
}

export function asUpdate(body: Record<string, unknown>): UpdateBody {
  return body as unknown as UpdateBody
}
