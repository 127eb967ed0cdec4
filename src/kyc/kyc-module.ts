import type { Module } from '../module.ts'
import { kycDocumentsMigration } from './kyc-migration.ts'

// KYC and KYB: documents, submissions, review, retention.
export const kycModule: Module = {
  name: 'kyc',
  migrations: {
    '0015_kyc_documents': kycDocumentsMigration,
  },
}
