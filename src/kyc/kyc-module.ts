import type { Module } from '../module.ts'
import { noDropbox } from './dropbox.ts'
import { SimulatedCompanyRegistry } from './company-registry.ts'
import { KycService } from './kyc-service.ts'
import { KybService } from './kyb-service.ts'
import { DocumentRetention } from './document-retention.ts'
import type { KycTables } from './kyc-migration.ts'
import { contract } from '../contract/index.ts'
import { endpoint, partnerOf } from '../transport/nats/endpoint.ts'
import { retention_job_kind } from './document-retention.ts'
import { kycDocumentsMigration } from './kyc-migration.ts'
import { document_retention_job_limits } from './kyc-limits.ts'
import { document_bytes_max, document_chunk_bytes_max, kyb_documents_max, kyb_metadata_bytes_max, kyb_metadata_keys_max, object_name_length_max, submission_bytes_max } from './kyc-contract.ts'

/** What the module builds: its members of the bank's Services. */
export interface KycServices {
  /**
   * KYC submissions (`svc.user.<partner_id>.upload_kyc_documents`), operator review,
   * documents and the audit trail.
   */
  kyc: KycService
  /** KYB (`svc.kyb.<partner_id>.*`) and its operator review. */
  kyb: KybService
  /** The daily deletion of rejected applications' documents (`kyc.retention` jobs). */
  documentRetention: DocumentRetention
}

// KYC and KYB: documents, submissions, review, retention.
export const kycModule: Module<KycServices, KycTables> = {
  name: 'kyc',
  needs: ['users', 'partners', 'entities', 'notify', 'jobs'],
  services: (s, { db, clock, config, given }) => {
    const dropbox = given.dropbox ?? noDropbox
    const registry = given.registry ?? new SimulatedCompanyRegistry()
    return {
      kyc: new KycService(db, clock, dropbox, s.users, s.partners),
      kyb: new KybService(db, clock, dropbox, registry, s.entities, s.partners, s.notifier,
        s.users),
      documentRetention: new DocumentRetention(db, clock, s.jobRunner,
        config.documentRetentionDays),
    }
  },
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
  endpoints: (s) => [
    endpoint(contract.operators.entityReview, (r, c) => s.kyb.reviewEntity(c.caller, r.entity_id, r.decision, r.reason)),
    endpoint(contract.operators.userKyc, async (r, c) => ({ user: await s.kyc.setStatus(c.caller, r.user_id, r.status, r.reason) })),
    endpoint(contract.kyc.uploadKycDocuments, (r, c) => s.kyc.submit(c.caller, r)),
    endpoint(contract.kyb.get, (r, c) => s.kyb.get(partnerOf(c), r.entity_id)),
    endpoint(contract.kyb.submit, (r, c) => s.kyb.submit(c.caller, r)),
    endpoint(contract.kyb.update, (r, c) => s.kyb.update(partnerOf(c), r)),
    endpoint(contract.kyb.updateDirector, (r, c) => s.kyb.updateDirector(partnerOf(c), r)),
    endpoint(contract.kyb.sendVerificationEmail, (r, c) => s.kyb.sendVerificationEmail(partnerOf(c), r)),
    endpoint(contract.reviews.kycList, (r) => s.kyc.list(r)),
    endpoint(contract.reviews.kycShow, (r) => s.kyc.show(r.user_id)),
    endpoint(contract.reviews.kycDecide, (r, c) => s.kyc.decide(c.caller, r)),
    endpoint(contract.reviews.kybList, (r) => s.kyb.list(r)),
    endpoint(contract.reviews.kybShow, (r) => s.kyb.show(r.entity_id)),
    endpoint(contract.reviews.kybDecide, (r, c) => s.kyb.decide(c.caller, r)),
    endpoint(contract.reviews.documentGet, (r) => s.kyc.documentChunk(r)),
  ],
  jobKinds: [retention_job_kind],
}
