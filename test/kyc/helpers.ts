import { headers as natsHeaders, type NatsConnection } from '@nats-io/transport-node'
import { Objm } from '@nats-io/obj'

// Putting files into a partner's dropbox as the reference SDK's KycDocumentUploader and
// KybDocumentUploader do: the bucket created if missing (file storage, one replica), each
// object with an `original_filename` header.

/** The smallest bytes each accepted type starts with, plus some body. */
export const pdf = (body = 'hello') => new TextEncoder().encode(`%PDF-1.7\n${body}\n%%EOF\n`)
export const jpeg = () => Uint8Array.from([0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10, 0x4a, 0x46, 0x49, 0x46, 0x00, 0x01])
export const png = () => Uint8Array.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d])

export async function putObjects(nc: NatsConnection, bucket: string, objects: Record<string, Uint8Array>, originalFilename = 'document.pdf'): Promise<void> {
  const store = await new Objm(nc).create(bucket, { storage: 'file' as never, replicas: 1 })
  for (const [name, bytes] of Object.entries(objects)) {
    const h = natsHeaders()
    h.set('original_filename', originalFilename)
    await store.putBlob({ name, headers: h }, bytes)
  }
}

export async function deleteObject(nc: NatsConnection, bucket: string, name: string): Promise<void> {
  const store = await new Objm(nc).open(bucket)
  await store.delete(name)
}
