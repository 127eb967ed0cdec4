import type { z } from 'zod'
import type { incomingDetails, incomingOperations } from './incoming-contract.ts'

export type IncomingDetails = z.output<typeof incomingDetails>
export type SandboxIncomingRequest = z.output<typeof incomingOperations.sandboxIncoming.request>
export type SandboxIncomingReply = z.input<typeof incomingOperations.sandboxIncoming.response>
