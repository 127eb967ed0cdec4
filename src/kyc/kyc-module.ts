import type { Module } from '../module.ts'
import { kycDocumentsMigration } from './kyc-migration.ts'
import { document_retention_job_limits } from './kyc-limits.ts'
import { document_bytes_max, document_chunk_bytes_max, kyb_documents_max, kyb_metadata_bytes_max, kyb_metadata_keys_max, object_name_length_max, submission_bytes_max } from './kyc-contract.ts'

// KYC and KYB: documents, submissions, review, retention.
export const kycModule: Module = {
  name: 'kyc',
  migrations: {
    '0015_kyc_documents': kycDocumentsMigration,
  },
  limits: {
    // The request bounds live in the contract, which the SDK checks too.
    document_bytes_max,
    submission_bytes_max,
    kyb_documents_max,
    object_name_length_max,
    document_chunk_bytes_max,
    kyb_metadata_keys_max,
    kyb_metadata_bytes_max,
    retention_job: document_retention_job_limits,
  },
}
