import { StorageType } from '@nats-io/jetstream'
import { Objm, type ObjectStore } from '@nats-io/obj'
import { headers as natsHeaders, type NatsConnection } from '@nats-io/transport-node'

// What the reference SDK's KycDocumentUploader and KybDocumentUploader do before a request
// names any document: make sure the subject's JetStream Object Store bucket exists (created
// when missing, with their settings: file storage, one replica, 100 MB, a 90-day TTL), then
// put each file under a name stamped with the upload's epoch second and a header
// `original_filename` carrying the file's own name.

/** A file as the partner has it on disk: its name and its bytes. */
export interface PartnerFile {
  filename: string
  bytes: Uint8Array
}

const bucket_bytes_max = 100 * 1024 * 1024
const bucket_ttl_ns = 90 * 24 * 3600 * 1_000_000_000

/** The epoch second the uploaders stamp into object names (`Instant.now().getEpochSecond()`). */
export const epochSecond = () => Math.floor(Date.now() / 1000)

async function ensureObjectStore(nc: NatsConnection, bucket: string,
    description: string): Promise<ObjectStore> {
  const objm = new Objm(nc)
  try {
    return await objm.open(bucket)
  } catch {
    return objm.create(bucket, { description, max_bytes: bucket_bytes_max,
      storage: StorageType.File, replicas: 1, ttl: bucket_ttl_ns })
  }
}

async function put(store: ObjectStore, key: string, file: PartnerFile): Promise<void> {
  const h = natsHeaders()
  h.set('original_filename', file.filename)
  await store.putBlob({ name: key, headers: h }, file.bytes)
}

export interface KycUpload {
  bucket: string
  idDocument: string
  idBack: string | null
  proofOfResidence: string
}

/**
 * KycDocumentUploader.uploadDocuments: front, back (optional) and proof into
 * `kyc_dropbox_<user_id>`.
 */
export async function uploadKycDocuments(
  nc: NatsConnection,
  userId: string,
  files: { front: PartnerFile; back?: PartnerFile; proof: PartnerFile },
  epoch = epochSecond(),
): Promise<KycUpload> {
  const bucket = `kyc_dropbox_${userId}`
  const store = await ensureObjectStore(nc, bucket, `KYC document dropbox for user ${userId}`)
  const upload: KycUpload = {
    bucket,
    idDocument: `kyc_id_front_${userId}_${epoch}`,
    idBack: files.back ? `kyc_id_back_${userId}_${epoch}` : null,
    proofOfResidence: `kyc_proof_of_residence_${userId}_${epoch}`,
  }
  await put(store, upload.idDocument, files.front)
  if (files.back && upload.idBack) await put(store, upload.idBack, files.back)
  await put(store, upload.proofOfResidence, files.proof)
  return upload
}

export interface KybUpload {
  bucket: string
  businessDocKeys: string[]
  directorDocKeys: Record<string, string[]>
}

/**
 * KybDocumentUploader.uploadDocuments: business documents as `<doc_type>_<epoch>` and each
 * director's as `<doc_type>_<director_id>_<epoch>` into `kyb_dropbox_<entity_id>`.
 */
export async function uploadKybDocuments(
  nc: NatsConnection,
  entityId: string,
  businessDocs: Record<string, PartnerFile>,
  directorDocs: Record<string, Record<string, PartnerFile>>,
  epoch = epochSecond(),
): Promise<KybUpload> {
  const bucket = `kyb_dropbox_${entityId}`
  const store = await ensureObjectStore(nc, bucket, `KYB document dropbox for entity ${entityId}`)
  const businessDocKeys: string[] = []
  for (const [docType, file] of Object.entries(businessDocs)) {
    const key = `${docType}_${epoch}`
    await put(store, key, file)
    businessDocKeys.push(key)
  }
  const directorDocKeys: Record<string, string[]> = {}
  for (const [directorId, docs] of Object.entries(directorDocs)) {
    directorDocKeys[directorId] = []
    for (const [docType, file] of Object.entries(docs)) {
      const key = `${docType}_${directorId}_${epoch}`
      await put(store, key, file)
      directorDocKeys[directorId].push(key)
    }
  }
  return { bucket, businessDocKeys, directorDocKeys }
}
