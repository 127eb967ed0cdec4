// The records of the incumbent's reference Java SDK (vertex-java-sdk-reference,
// src/main/java/client/*.java) that this bank serves: each record's name, its components in
// declaration order and their Java types. These are interface facts — what a partner's
// compiled code writes and reads — written down here in our own words; the SDK's code is not
// copied. Every request the compatibility suite builds and every reply check it makes is
// generated from this list (docs/guides/moving-from-the-incumbent.md).
//
// The SDK's `UUID()` records are unused by any component it sends or reads, so they are
// left out. Its `UUIDs()` record is declared twice, in AccountService and in CardService,
// alike (empty, written `{}`): it is listed once, with AccountService's records, and the card
// records name it too.

/**
 * A component's Java type, spelled as Java's reflection spells it (no spaces): `String`,
 * `boolean`, `int`, `Object` (any JSON value), the name of another record of this list,
 * `List<T>`, `Map<String,T>`, or `Metadata` (the SDK's `HashMap<String, String>` subclass).
 */
export type JavaType = string

export type SdkService =
  | 'EntityService'
  | 'UserService'
  | 'AccountService'
  | 'KYBService'
  | 'CardService'

export interface SdkRecord {
  name: string
  service: SdkService
  components: ReadonlyArray<readonly [name: string, type: JavaType]>
}

const s = (...names: string[]) => names.map((name) => [name, 'String'] as const)

const entityRecords = {
  EntityInfoRequest: s('entity_id'),
  EntityInfoResponse: [
    ...s('id', 'date_created', 'name', 'trading_name', 'entity_type', 'email'),
    ['approved', 'boolean'],
    ...s('first_name', 'last_name', 'phone_number', 'gender', 'date_of_birth', 'id_number',
      'id_type'),
    ...s('id_issue_date', 'id_issue_expiry_date', 'city', 'residency', 'title', 'permit_number'),
  ],
  UpdateAddressRequest: s('entity_id', 'address_line_1', 'address_line_2', 'state', 'postcode',
    'country', 'city'),
  UpdateAddressResponse: [],
  Address: s('address_line_1', 'address_line_2', 'city', 'state', 'postcode'),
  CreateEntityRequest: [
    ...s('name', 'trading_name', 'tax_number', 'registration_number', 'entity_type', 'purpose',
      'email', 'country'),
    ...s('first_name', 'last_name', 'phone_number', 'gender', 'date_of_birth', 'id_number',
      'id_type'),
    ...s('id_issue_date', 'id_issue_expiry_date', 'city', 'residency', 'title', 'permit_number'),
    ['address', 'Address'],
  ],
  CreateEntityResponse: [['id', 'String'], ['user_ready', 'boolean'], ['user_id', 'String']],
  Entity: [
    ...s('id', 'name', 'trading_name', 'registration_number', 'email', 'created_at', 'entity_type'),
    ...s('first_name', 'last_name', 'phone_number', 'gender', 'date_of_birth', 'id_number',
      'id_type'),
    ...s('id_issue_date', 'id_issue_expiry_date', 'city', 'residency', 'title', 'permit_number'),
  ],
  ListEntityRequest: [],
  ListEntityResponse: [['entities', 'List<Entity>']],
} satisfies Record<string, ReadonlyArray<readonly [string, JavaType]>>

const userRecords = {
  CreateUserRequest: [
    ...s('first_name', 'last_name', 'email', 'entity_id', 'gender', 'date_of_birth', 'country',
      'city', 'residency'),
    ...s('id_number', 'id_type', 'id_issue_date', 'id_issue_expiry_date', 'phone_number', 'title'),
    ['verified', 'boolean'],
    ['permit_number', 'String'],
  ],
  // The interface names the key `userId` for create and update, and so does the SDK.
  CreateUserResponse: s('userId'),
  UpdateUserProfileRequest: [
    ...s('user_id', 'first_name', 'last_name', 'email', 'phone_number', 'gender', 'date_of_birth'),
    ...s('birth_country', 'birth_city', 'residency', 'id_number', 'id_type', 'id_issue_date'),
    ...s('id_issue_expiry_date', 'title', 'permit_number'),
  ],
  UpdateUserProfileResponse: s('userId'),
  ListUserRequest: s('entity_id'),
  ListUserResponse: [['users', 'List<User>']],
  // The user record has no kyc_rejection_reason: a rejected user's record carries it
  // (as the interface says), which such a partner could not read; none of this suite's users
  // is rejected.
  User: [
    ...s('id', 'first_name', 'last_name', 'email', 'phone_number', 'entity_id', 'created_at',
      'updated_at'),
    ['verified', 'boolean'],
    ...s('verified_at', 'gender', 'date_of_birth', 'country', 'city', 'residency', 'id_number',
      'id_type'),
    ...s('id_issue_date', 'id_issue_expiry', 'title', 'date_registered', 'permit_number'),
    ...s('kyc_status', 'kyc_submitted_at', 'kyc_reviewed_at'),
  ],
  // Object names in the user's dropbox bucket (`kyc_dropbox_<user_id>`).
  UploadKYCDocumentsRequest: s('user_id', 'id_document', 'proof_of_residence'),
  UploadKYCDocumentsResponse: [['success', 'boolean'], ['message', 'String']],
} satisfies Record<string, ReadonlyArray<readonly [string, JavaType]>>

const accountRecords = {
  OpenAccountRequest: s('entity_id'),
  OpenAccountResponse: [
    ...s('account_id', 'entity_id', 'account_number', 'country', 'created_at', 'account_type'),
    ['metadata', 'Metadata'],
  ],
  GetAccountDetailsRequest: s('account_id'),
  GetAccountDetailsResponse: [
    ...s('account_id', 'account_number', 'balance', 'available_balance', 'account_type'),
    ['metadata', 'Metadata'],
  ],
  TransferEFTRTCRequest: [
    ...s('account_id', 'clientTxId'),
    ['amount', 'int'],
    ...s('ref', 'own_ref', 'account_number', 'branch_code', 'name'),
    ['pay_and_clear', 'boolean'],
    ...s('notification_email', 'notification_name', 'beneficiary_id'),
    ['beneficiary_version', 'int'],
  ],
  // The reply of transfer_eft_rtc and of transfer_internal alike.
  TransferEFTRTCResponse: s('tx_id', 'amount'),
  TransferInternalRequest: [
    ...s('account_id', 'clientTxId'),
    ['amount', 'int'],
    ...s('ref', 'own_ref', 'account_number', 'name', 'notification_email', 'notification_name',
      'beneficiary_id'),
    ['beneficiary_version', 'int'],
  ],
  // `filter_user_ids` is an empty record in the SDK: it writes `{}` or null, never a list.
  GetTransactionsRequest: [['account_id', 'String'], ['filter_user_ids', 'UUIDs']],
  GetTransactionsResponse: [['account_id', 'String'], ['transactions', 'List<Transaction>']],
  Transaction: [
    ...s('tx_id', 'parent_tx_id', 'date', 'amount', 'ref', 'status', 'tx_sha', 'user_id',
      'added_by'),
    ...s('tx_type', 'tx_payment_type', 'fee', 'recipient_name', 'credit', 'debit',
      'running_balance'),
    ['verified', 'boolean'],
  ],
  UUIDs: [],
  AccountSummary: [...s('account_id', 'account_number', 'created_at', 'account_type'),
    ['metadata', 'Metadata']],
  GetAccountsByEntityRequest: s('entity_id'),
  GetAccountsByEntityResponse: [['entity_id', 'String'], ['accounts', 'List<AccountSummary>']],
  GetTransactionByIdRequest: s('tx_id'),
  GetTransactionByIdResponse: [['transaction', 'Transaction']],
} satisfies Record<string, ReadonlyArray<readonly [string, JavaType]>>

const kybRecords = {
  Director: [
    ...s('id', 'name'),
    ['approved', 'boolean'],
    ['verified', 'boolean'],
    ['documents', 'List<Document>'],
    ['verification_sent', 'boolean'],
    ['id_type', 'String'],
    ['metadata', 'Map<String,Object>'],
  ],
  Document: [...s('key', 'doc_type', 'rejection_reason'), ['approved', 'boolean']],
  GetKYBRequest: s('entity_id'),
  GetKYBResponse: [
    ['entity_id', 'String'],
    ['documents', 'List<Document>'],
    ['directors', 'List<Director>'],
    ['metadata', 'Map<String,Object>'],
    ...s('state', 'rejection_reason'),
  ],
  // Object names in the entity's dropbox bucket (`kyb_dropbox_<entity_id>`): the business's,
  // and each director's by director id.
  SubmitDocumentsRequest: [['entity_id', 'String'], ['documents', 'List<String>'],
    ['directors', 'Map<String,List<String>>']],
  SubmitDocumentsResponse: [],
  UpdateKYBRequest: [['entity_id', 'String'], ['metadata', 'Map<String,Object>']],
  UpdateKYBResponse: [
    ['entity_id', 'String'],
    ['documents', 'List<Document>'],
    ['directors', 'List<Director>'],
    ['metadata', 'Map<String,Object>'],
  ],
  SendDirectorVerificationLinkRequest: s('entity_id', 'director_id', 'email'),
  SendDirectorVerificationLinkResponse: [],
  UpdateDirectorRequest: [...s('entity_id', 'director_id', 'full_name', 'email'),
    ['metadata', 'Map<String,Object>']],
  UpdateDirectorResponse: [],
} satisfies Record<string, ReadonlyArray<readonly [string, JavaType]>>

const b = (...names: string[]) => names.map((name) => [name, 'boolean'] as const)
const cardParts = [
  ['features', 'CardFeatures'],
  ['limits', 'CardLimits'],
  ['extras', 'CardExtras'],
] as const

// CardService configures nothing (a default ObjectMapper): every component is written, absent
// ones as null, 0 or false. `type` is 0 (virtual) or 1 (physical), `use_type` 0 (reusable) or
// 1 (single use); limits are cents in a Java `int`.
const cardRecords = {
  // `auto_lock` is the SDK's JsonTime, an empty record: it writes `{}` or null, and reads only
  // an object without keys or null. The bank replies null when no auto-lock time is set; a set
  // one is an RFC 3339 string, which this record cannot read.
  CardExtras: [['auto_lock', 'JsonTime']],
  CardFeatures: b('domestic', 'international', 'e_commerce', 'atm', 'pos', 'contactless'),
  CardLimits: [
    ['transaction_enabled', 'boolean'],
    ['transaction', 'int'],
    ['daily_enabled', 'boolean'],
    ['daily', 'int'],
    ['monthly_enabled', 'boolean'],
    ['monthly', 'int'],
    ['yearly_enabled', 'boolean'],
    ['yearly', 'int'],
  ],
  JsonTime: [],
  RequestCardRequest: [
    ...s('account_id', 'user_id', 'name'),
    ['type', 'int'],
    ['use_type', 'int'],
    ...cardParts,
  ],
  RequestCardResponse: s('id'),
  CardRequestView: [
    ...s('id', 'name'),
    ['type', 'int'],
    ['use_type', 'int'],
    ...s('created_at', 'requested_by', 'assigned_to'),
    ...cardParts,
    ['status', 'String'],
  ],
  // `user_ids` is the empty record UUIDs (see the top): the SDK writes `{}` or null.
  ListOrganisationCardRequestsRequest: [['account_id', 'String'], ['user_ids', 'UUIDs']],
  ListOrganisationCardRequestsResponse: [['id', 'String'], ['requests', 'List<CardRequestView>']],
  RespondToCardRequestRequest: [
    ...s('entity_id', 'account_id', 'initiator', 'request_id'),
    ['approved', 'boolean'],
  ],
  RespondToCardRequestResponse: [],
  EditCardRequest: [...s('entity_id', 'card_id', 'name'), ...cardParts],
  EditCardResponse: [],
  CardView: [
    ...s('id', 'name'),
    ['type', 'int'],
    ['use_type', 'int'],
    ...s('last_4', 'date_created', 'user_id', 'org_id'),
    ...cardParts,
    ['status', 'String'],
  ],
  ListOrganisationCardsRequest: [...s('entity_id', 'account_id'), ['user_ids', 'UUIDs']],
  ListOrganisationCardsResponse: [['id', 'String'], ['cards', 'List<CardView>']],
  GetCardDetailsRequest: s('account_id', 'initiator', 'id'),
  GetCardDetailsResponse: s('card_number', 'expiry_date', 'cvv'),
  UpdateCardStatusRequest: s('account_id', 'initiator', 'id', 'status'),
  UpdateCardStatusResponse: [],
  ActivateCardRequest: s('account_id', 'initiator', 'id', 'last_4'),
  ActivateCardResponse: [],
  SetPINRequest: s('account_id', 'initiator', 'id', 'pin'),
  SetPINResponse: [],
} satisfies Record<string, ReadonlyArray<readonly [string, JavaType]>>

export type RecordName =
  | keyof typeof entityRecords
  | keyof typeof userRecords
  | keyof typeof accountRecords
  | keyof typeof kybRecords
  | keyof typeof cardRecords

function recordsOf(service: SdkService, table: Record<string, ReadonlyArray<readonly [string,
    JavaType]>>): SdkRecord[] {
  return Object.entries(table).map(([name, components]) => ({ name, service, components }))
}

export const sdkRecords: readonly SdkRecord[] = [
  ...recordsOf('EntityService', entityRecords),
  ...recordsOf('UserService', userRecords),
  ...recordsOf('AccountService', accountRecords),
  ...recordsOf('KYBService', kybRecords),
  ...recordsOf('CardService', cardRecords),
]

const byName = new Map(sdkRecords.map((record) => [record.name, record]))

export function sdkRecord(name: string): SdkRecord {
  const record = byName.get(name)
  if (!record) throw new Error(`no SDK record named ${name} in test/compat/sdk-records.ts`)
  return record
}

/** `List<X>` → `X`; undefined for any other type. */
export function listElement(type: JavaType): string | undefined {
  return /^List<(.+)>$/.exec(type)?.[1]
}

/** `Map<String,X>` → `X`; undefined for any other type. */
export function mapValue(type: JavaType): string | undefined {
  return /^Map<String,(.+)>$/.exec(type)?.[1]
}

/** Whether the type names another record of the list (a nested record). */
export function isRecordType(type: JavaType): boolean {
  return byName.has(type)
}

/** A CardService method: its subject `svc.card.<partner_id>.<name>` and its two records. */
function card<const N extends string, const Q extends RecordName, const R extends RecordName>(
  name: N,
  request: Q,
  response: R,
) {
  return { subject: `svc.card.<partner_id>.${name}` as const, request, response }
}

/**
 * The subjects the SDK's methods call and the records they write and read. `<partner_id>`
 * is the one wildcard its services fill in.
 */
export const sdkMethods = {
  entityCreate: { subject: 'svc.entity.<partner_id>.create', request: 'CreateEntityRequest',
    response: 'CreateEntityResponse' },
  entityInfo: { subject: 'svc.entity.<partner_id>.info', request: 'EntityInfoRequest',
    response: 'EntityInfoResponse' },
  entityList: { subject: 'svc.entity.<partner_id>.list-entities', request: 'ListEntityRequest',
    response: 'ListEntityResponse' },
  entityUpdateAddress: { subject: 'svc.entity.<partner_id>.update_address',
    request: 'UpdateAddressRequest', response: 'UpdateAddressResponse' },
  userCreate: { subject: 'svc.user.<partner_id>.create', request: 'CreateUserRequest',
    response: 'CreateUserResponse' },
  userUpdate: { subject: 'svc.user.<partner_id>.update', request: 'UpdateUserProfileRequest',
    response: 'UpdateUserProfileResponse' },
  userList: { subject: 'svc.user.<partner_id>.list', request: 'ListUserRequest',
    response: 'ListUserResponse' },
  accountCreate: { subject: 'svc.account.<partner_id>.create', request: 'OpenAccountRequest',
    response: 'OpenAccountResponse' },
  accountDetails: { subject: 'svc.account.<partner_id>.get_details',
    request: 'GetAccountDetailsRequest', response: 'GetAccountDetailsResponse' },
  accountsByEntity: { subject: 'svc.account.<partner_id>.get_by_entity',
    request: 'GetAccountsByEntityRequest', response: 'GetAccountsByEntityResponse' },
  transactionList: { subject: 'svc.account.<partner_id>.list', request: 'GetTransactionsRequest',
    response: 'GetTransactionsResponse' },
  transactionGet: { subject: 'svc.account.<partner_id>.get_transaction',
    request: 'GetTransactionByIdRequest', response: 'GetTransactionByIdResponse' },
  transferEftRtc: { subject: 'svc.account.<partner_id>.transfer_eft_rtc',
    request: 'TransferEFTRTCRequest', response: 'TransferEFTRTCResponse' },
  transferInternal: { subject: 'svc.account.<partner_id>.transfer_internal',
    request: 'TransferInternalRequest', response: 'TransferEFTRTCResponse' },
  userUploadKycDocuments: { subject: 'svc.user.<partner_id>.upload_kyc_documents',
    request: 'UploadKYCDocumentsRequest', response: 'UploadKYCDocumentsResponse' },
  kybGet: { subject: 'svc.kyb.<partner_id>.get', request: 'GetKYBRequest',
    response: 'GetKYBResponse' },
  kybSubmit: { subject: 'svc.kyb.<partner_id>.submit', request: 'SubmitDocumentsRequest',
    response: 'SubmitDocumentsResponse' },
  kybUpdate: { subject: 'svc.kyb.<partner_id>.update', request: 'UpdateKYBRequest',
    response: 'UpdateKYBResponse' },
  kybUpdateDirector: { subject: 'svc.kyb.<partner_id>.update_director',
    request: 'UpdateDirectorRequest', response: 'UpdateDirectorResponse' },
  kybSendVerificationEmail: {
    subject: 'svc.kyb.<partner_id>.send_verification_email',
    request: 'SendDirectorVerificationLinkRequest',
    response: 'SendDirectorVerificationLinkResponse',
  },
  cardRequest: card('request', 'RequestCardRequest', 'RequestCardResponse'),
  cardListRequests: card(
    'list_requests',
    'ListOrganisationCardRequestsRequest',
    'ListOrganisationCardRequestsResponse',
  ),
  cardRespond: card(
    'respond_to_request',
    'RespondToCardRequestRequest',
    'RespondToCardRequestResponse',
  ),
  cardEdit: card('edit', 'EditCardRequest', 'EditCardResponse'),
  cardList: card('list_cards', 'ListOrganisationCardsRequest', 'ListOrganisationCardsResponse'),
  cardDetails: card('get_details', 'GetCardDetailsRequest', 'GetCardDetailsResponse'),
  cardUpdateStatus: card('update_status', 'UpdateCardStatusRequest', 'UpdateCardStatusResponse'),
  cardActivate: card('activate_card', 'ActivateCardRequest', 'ActivateCardResponse'),
  cardSetPin: card('set_pin', 'SetPINRequest', 'SetPINResponse'),
} as const satisfies Record<string, { subject: string; request: RecordName; response: RecordName }>

export type SdkMethod = keyof typeof sdkMethods
