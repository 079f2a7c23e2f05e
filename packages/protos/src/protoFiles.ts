import path from 'node:path';
import * as protobuf from 'protobufjs';
import type { Refusal__Output } from './generated/tessera/common/v1/Refusal';

/** Works from both src/ (tests) and dist/ (built code): both sit two levels below the package. */
export const PROTO_ROOT = path.resolve(__dirname, '../../../proto');

/**
 * A Refusal outside any RPC message (a unary call's trailer) is encoded here, with the same
 * protobufjs that @grpc/proto-loader encodes the RPC messages with.
 */
const refusalType = protobuf.loadSync(path.join(PROTO_ROOT, 'tessera/common/v1/common.proto')).lookupType('tessera.common.v1.Refusal');

export function encodeRefusal(refusal: Refusal__Output): Buffer {
  return Buffer.from(refusalType.encode(refusalType.fromObject(refusal)).finish());
}

/** Undefined when `bytes` is not a Refusal. */
export function decodeRefusal(bytes: Buffer): Refusal__Output | undefined {
  try {
    return refusalType.toObject(refusalType.decode(bytes), { defaults: true, oneofs: true }) as Refusal__Output;
  } catch {
    return undefined;
  }
}
