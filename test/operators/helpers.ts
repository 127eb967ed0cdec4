import type { OperatorClient } from '../../src/client/index.ts'

// What only the operator tests share. The shared assertions live in test/support.

export const partnerTokenPattern = /^pbk_[A-Za-z0-9_-]{43}$/

type PartnerCreateBody = Parameters<OperatorClient['partners']['create']>[0]
type CredentialCreateBody = Parameters<OperatorClient['credentials']['create']>[0]
type ReviewBody = Parameters<OperatorClient['entities']['review']>[0]

/** Bodies the SDK's types would refuse, to see the service refuse them too. */
export const asPartnerCreate = (body: Record<string, unknown>) =>
  body as unknown as PartnerCreateBody
export const asCredentialCreate = (body: Record<string, unknown>) =>
  body as unknown as CredentialCreateBody
export const asReview = (body: Record<string, unknown>) => body as unknown as ReviewBody
