// Names the image in an OCI layout's index.json and prints the manifest digest.
// umoci tags are bare ("0.1.0"); podman, skopeo and containerd name an imported image after the
// full reference in org.opencontainers.image.ref.name (containerd also reads io.containerd.image.name),
// so both carry "<repository>:<version>". index.json is not content-addressed: the manifest
// digest does not change.
//   node scripts/image/finish-layout.ts <layout dir> <reference>
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

interface Descriptor {
  mediaType: string;
  digest: string;
  size: number;
  annotations?: Record<string, string>;
}

const [layout, reference] = process.argv.slice(2);
if (!layout || !reference) {
  console.error("usage: finish-layout.ts <layout dir> <reference>");
  process.exit(2);
}
const indexPath = join(layout, "index.json");
const index = JSON.parse(readFileSync(indexPath, "utf8")) as { manifests: Descriptor[] };
const [manifest, ...rest] = index.manifests;
if (!manifest || rest.length > 0) {
  console.error(`${indexPath}: expected one manifest, found ${index.manifests.length}`);
  process.exit(1);
}
manifest.annotations = {
  "io.containerd.image.name": reference,
  "org.opencontainers.image.ref.name": reference,
};
writeFileSync(indexPath, `${JSON.stringify(index)}\n`);
console.log(manifest.digest);
