// Server reflection for every service auth serves. protobufjs (under @grpc/proto-loader) names
// the implicit entry message of a map field after the field ("Node_labels"), where protoc and
// the descriptor rules say "<CamelField>Entry" ("NodeLabelsEntry"); strict clients such as grpcurl (Go
// protobuf) then refuse the whole file. The descriptors are rewritten with the standard names
// before they are handed to @grpc/reflection. The wire format is unaffected.
import { createRequire } from "node:module";
import type { Server } from "@grpc/grpc-js";
import type { PackageDefinition } from "@grpc/proto-loader";
import { ReflectionService } from "@grpc/reflection";

interface FieldDescriptor {
  name?: string;
  typeName?: string;
}
interface MessageDescriptor {
  name?: string;
  field?: FieldDescriptor[];
  nestedType?: MessageDescriptor[];
  options?: { mapEntry?: boolean } | null;
}
interface FileDescriptor {
  messageType?: MessageDescriptor[];
}
interface DescriptorCodec {
  decode(b: Uint8Array): FileDescriptor;
  encode(m: FileDescriptor): { finish(): Uint8Array };
}

const require = createRequire(import.meta.url);
// protobufjs is the library @grpc/proto-loader itself builds descriptors with; resolve the same copy.
const loaderDir = require.resolve("@grpc/proto-loader");
const descriptor = createRequire(loaderDir)("protobufjs/ext/descriptor") as {
  FileDescriptorProto: DescriptorCodec;
};

/** protoc's rule: "node_labels" -> "NodeLabelsEntry" (underscores dropped, next letter upper-cased). */
export function mapEntryName(fieldName: string): string {
  const camel = fieldName.replace(/_+([a-zA-Z0-9])/g, (_m, c: string) => c.toUpperCase());
  return `${camel.charAt(0).toUpperCase()}${camel.slice(1)}Entry`;
}

function fixMessage(m: MessageDescriptor): void {
  const entries = new Map<string, MessageDescriptor>();
  for (const nested of m.nestedType ?? []) {
    if (nested.options?.mapEntry && nested.name) entries.set(nested.name, nested);
    fixMessage(nested);
  }
  for (const f of m.field ?? []) {
    if (!f.typeName || !f.name) continue;
    const parts = f.typeName.split(".");
    const entry = entries.get(parts[parts.length - 1] ?? "");
    if (!entry) continue;
    const fixed = mapEntryName(f.name);
    entry.name = fixed;
    f.typeName = [...parts.slice(0, -1), fixed].join(".");
  }
}

function fixFile(bytes: Uint8Array): Buffer {
  const file = descriptor.FileDescriptorProto.decode(bytes);
  for (const m of file.messageType ?? []) fixMessage(m);
  return Buffer.from(descriptor.FileDescriptorProto.encode(file).finish());
}

/** A copy of `def` whose file descriptors use standard map-entry names. */
export function withStandardMapEntries(def: PackageDefinition): PackageDefinition {
  const cache = new Map<Buffer, Buffer>();
  const out: PackageDefinition = {};
  for (const [name, value] of Object.entries(def)) {
    const protos = (value as { fileDescriptorProtos?: Buffer[] }).fileDescriptorProtos;
    if (!protos) {
      out[name] = value;
      continue;
    }
    const fixed = protos.map((p) => {
      let f = cache.get(p);
      if (!f) {
        f = fixFile(p);
        cache.set(p, f);
      }
      return f;
    });
    out[name] = { ...value, fileDescriptorProtos: fixed } as typeof value;
  }
  return out;
}

export function addReflection(server: Pick<Server, "addService">, defs: PackageDefinition[]): void {
  const merged: PackageDefinition = Object.assign({}, ...defs);
  new ReflectionService(withStandardMapEntries(merged)).addToServer(server);
}
