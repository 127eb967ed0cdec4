import type { ErrorType } from '../src/contract/error-types.ts'

// What the SDK's generated declarations (scripts/gen-sdk-types.ts) add to the contract for
// each partner method: the names of its request and reply types, the named parts of its
// reply (`Transaction` is the `transaction` of `getTransaction`'s reply), and the error types
// it throws beyond those any call may throw. The rest of a method's documentation (what it
// does, its fields, its example) comes from the contract itself.
//
// The errors are kept here by hand, read off the services that answer each subject; a
// method's own are listed, not those of `commonErrors`. test/client/sdk-types.test.ts fails
// when a partner method has no row here or a row names a method that does not exist.

export interface MethodNames {
  request: string
  reply: string
  /** Named parts of the reply: type name → `field` or `field[]` (an element of a list). */
  parts?: Readonly<Record<string, string>>
  errors: readonly ErrorType[]
}

/** Error types any partner call may throw; each method's TSDoc names them in one line. */
export const commonErrors: readonly ErrorType[] = [
  'invalid_request', 'unauthorized', 'forbidden', 'rate_limited', 'unavailable',
]

const payment: readonly ErrorType[] = [
  'insufficient_funds', 'limit_exceeded', 'duplicate', 'idempotency_key_reused',
  'account_not_active', 'not_found',
]

/** Partner methods by SDK path (`<group>.<method>`), in no particular order. */
export const partnerMethodNames: Readonly<Record<string, MethodNames>> = {
  'entities.create': { request: 'CreateEntityRequest', reply: 'CreatedEntity',
    errors: ['conflict'] },
  'entities.info': { request: 'EntityInfoRequest', reply: 'Entity', errors: ['not_found'] },
  'entities.list': { request: 'ListEntitiesRequest', reply: 'EntityList',
    parts: { EntitySummary: 'entities[]' }, errors: [] },
  'entities.getAddress': { request: 'GetEntityAddressRequest', reply: 'EntityAddress',
    errors: ['not_found'] },
  'entities.updateAddress': { request: 'UpdateEntityAddressRequest',
    reply: 'UpdateEntityAddressReply', errors: ['not_found'] },
  'users.create': { request: 'CreateUserRequest', reply: 'CreatedUser',
    errors: ['not_found', 'invalid_state'] },
  'users.update': { request: 'UpdateUserRequest', reply: 'UpdatedUser',
    errors: ['not_found', 'invalid_state'] },
  'users.get': { request: 'GetUserRequest', reply: 'UserReply', parts: { User: 'user' },
    errors: ['not_found'] },
  'users.getBirthDetails': { request: 'GetBirthDetailsRequest', reply: 'BirthDetails',
    errors: ['not_found'] },
  'users.list': { request: 'ListUsersRequest', reply: 'UserList',
    parts: { UserSummary: 'users[]' }, errors: ['not_found'] },
  'users.uploadKycDocuments': { request: 'UploadKycDocumentsRequest', reply: 'KycSubmission',
    errors: ['not_found', 'invalid_state'] },
  'accounts.create': { request: 'CreateAccountRequest', reply: 'CreatedAccount',
    errors: ['not_found', 'invalid_state'] },
  'accounts.getByEntity': { request: 'GetAccountsByEntityRequest', reply: 'EntityAccounts',
    parts: { AccountSummary: 'accounts[]' }, errors: ['not_found'] },
  'accounts.getDetails': { request: 'GetAccountDetailsRequest', reply: 'Account',
    errors: ['not_found'] },
  'accounts.status': { request: 'AccountStatusRequest', reply: 'AccountStatus',
    parts: { LegalHold: 'holds[]' }, errors: ['not_found'] },
  'accounts.freeze': { request: 'FreezeAccountRequest', reply: 'AccountStatus',
    errors: ['not_found', 'invalid_state'] },
  'accounts.unfreeze': { request: 'UnfreezeAccountRequest', reply: 'AccountStatus',
    errors: ['not_found', 'invalid_state'] },
  'accounts.close': { request: 'CloseAccountRequest', reply: 'ClosedAccount',
    errors: ['not_found', 'invalid_state', 'account_not_closable'] },
  'accounts.transfer': { request: 'TransferRequest', reply: 'TransferResult', errors: payment },
  'accounts.transferInternal': { request: 'InternalTransferRequest', reply: 'TransferResult',
    errors: payment },
  'accounts.listTransactions': { request: 'ListTransactionsRequest', reply: 'TransactionPage',
    parts: { TransactionRow: 'transactions[]' }, errors: ['not_found'] },
  'accounts.getTransaction': { request: 'GetTransactionRequest', reply: 'TransactionReply',
    parts: { Transaction: 'transaction' }, errors: ['not_found'] },
  'accounts.statement': { request: 'StatementRequest', reply: 'Statement',
    errors: ['not_found', 'conflict'] },
  'accounts.statementGet': { request: 'GetStatementRequest', reply: 'StatementPart',
    errors: ['not_found', 'unprocessable'] },
  'incoming.details': { request: 'IncomingDetailsRequest', reply: 'IncomingPayment',
    errors: ['not_found'] },
  'bulkPayments.initiate': { request: 'InitiateBulkPaymentRequest',
    reply: 'InitiatedBulkPayment', errors: [...payment, 'too_many_attempts'] },
  'bulkPayments.verify': { request: 'VerifyBulkPaymentRequest', reply: 'BulkPaymentProgress',
    errors: ['otp_invalid', 'otp_expired', 'too_many_attempts', 'invalid_state', 'not_found'] },
  'bulkPayments.status': { request: 'BulkPaymentStatusRequest', reply: 'BulkPayment',
    parts: { BulkPaymentItem: 'payments[]' }, errors: ['not_found'] },
  'bulkPayments.cancel': { request: 'CancelBulkPaymentRequest', reply: 'CancelledBulkPayment',
    errors: ['invalid_state', 'not_found'] },
  'webhooks.setEndpoint': { request: 'SetWebhookEndpointRequest', reply: 'WebhookEndpoint',
    errors: [] },
  'webhooks.getEndpoint': { request: 'GetWebhookEndpointRequest', reply: 'WebhookEndpoint',
    errors: [] },
  'webhooks.rotateSecret': { request: 'RotateWebhookSecretRequest', reply: 'WebhookSecret',
    errors: [] },
  'webhooks.listDeliveries': { request: 'ListWebhookDeliveriesRequest',
    reply: 'WebhookDeliveryPage', parts: { WebhookDeliveryRow: 'deliveries[]' }, errors: [] },
  'webhooks.redeliver': { request: 'RedeliverWebhookRequest', reply: 'Redelivery',
    parts: { WebhookDelivery: 'delivery' }, errors: ['not_found'] },
  'mandates.create': { request: 'CreateMandateRequest', reply: 'Mandate', errors: ['conflict'] },
  'mandates.get': { request: 'GetMandateRequest', reply: 'Mandate', errors: ['not_found'] },
  'mandates.list': { request: 'ListMandatesRequest', reply: 'MandatePage',
    parts: { MandateSummary: 'mandates[]' }, errors: [] },
  'mandates.cancel': { request: 'CancelMandateRequest', reply: 'Mandate',
    errors: ['not_found', 'invalid_state'] },
  'debitOrders.create': { request: 'CreateDebitOrderRequest', reply: 'CreatedDebitOrder',
    errors: ['duplicate', 'idempotency_key_reused', 'unprocessable', 'invalid_state',
      'not_found'] },
  'debitOrders.list': { request: 'ListDebitOrdersRequest', reply: 'DebitOrderPage',
    parts: { DebitOrderSummary: 'debit_orders[]' }, errors: [] },
  'debitOrders.cancel': { request: 'CancelDebitOrderRequest', reply: 'CancelledDebitOrder',
    errors: ['not_found', 'invalid_state'] },
  'debitOrders.status': { request: 'DebitOrderStatusRequest', reply: 'DebitOrder',
    errors: ['not_found'] },
  'cards.request': { request: 'NewCardRequest', reply: 'CreatedCardRequest',
    errors: ['not_found', 'invalid_state'] },
  'cards.listRequests': { request: 'ListCardRequestsRequest', reply: 'CardRequestList',
    parts: { CardRequest: 'requests[]' }, errors: ['not_found'] },
  'cards.respondToRequest': { request: 'RespondToCardRequestRequest',
    reply: 'RespondToCardRequestReply', errors: ['not_found', 'invalid_state'] },
  'cards.edit': { request: 'EditCardRequest', reply: 'EditCardReply',
    errors: ['not_found', 'invalid_state'] },
  'cards.list': { request: 'ListCardsRequest', reply: 'CardList', parts: { Card: 'cards[]' },
    errors: ['not_found'] },
  'cards.getDetails': { request: 'GetCardDetailsRequest', reply: 'CardDetails',
    errors: ['not_found'] },
  'cards.updateStatus': { request: 'UpdateCardStatusRequest', reply: 'UpdateCardStatusReply',
    errors: ['not_found', 'invalid_state'] },
  'cards.activate': { request: 'ActivateCardRequest', reply: 'ActivateCardReply',
    errors: ['not_found', 'invalid_state'] },
  'cards.setPin': { request: 'SetCardPinRequest', reply: 'SetCardPinReply',
    errors: ['not_found', 'invalid_state'] },
  'cards.setAuthorizationDecisions': { request: 'SetAuthorizationDecisionsRequest',
    reply: 'AuthorizationDecisions', errors: [] },
  'cards.getAuthorizationDecisions': { request: 'GetAuthorizationDecisionsRequest',
    reply: 'AuthorizationDecisions', errors: [] },
  'kyb.get': { request: 'GetKybRequest', reply: 'Kyb', errors: ['not_found'] },
  'kyb.submit': { request: 'SubmitKybRequest', reply: 'SubmitKybReply',
    errors: ['not_found', 'invalid_state'] },
  'kyb.update': { request: 'UpdateKybRequest', reply: 'UpdatedKyb',
    errors: ['not_found', 'invalid_state'] },
  'kyb.updateDirector': { request: 'UpdateDirectorRequest', reply: 'UpdateDirectorReply',
    errors: ['not_found'] },
  'kyb.sendVerificationEmail': { request: 'SendVerificationEmailRequest',
    reply: 'SendVerificationEmailReply', errors: ['not_found'] },
  // The partner's own sandbox clock (sandbox only: production answers 403 `forbidden`).
  'sandbox.clock': { request: 'SandboxClockRequest', reply: 'SandboxClock', errors: [] },
  'sandbox.advance': { request: 'SandboxAdvanceRequest', reply: 'SandboxAdvanceReport',
    errors: ['conflict'] },
  // Without `confirm` a preview; with it, the reset (409 while an advance runs).
  'sandbox.reset': { request: 'SandboxResetRequest', reply: 'SandboxResetReport',
    parts: { SandboxRetiredCounts: 'retired' }, errors: ['conflict'] },
}
