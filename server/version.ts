// The running server version, read once from package.json (the single place it is set). The OCI
// image build (scripts/image/build.sh) adds build-info.json beside package.json; there the version
// names the commit as semver build metadata ("0.1.0+<commit>"), which version comparisons ignore.
import { readFileSync } from "node:fs";

const pkg = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as {
  version: string;
};

function imageRevision(): string | undefined {
  let text: string;
  try {
    text = readFileSync(new URL("../build-info.json", import.meta.url), "utf8");
  } catch {
    return undefined; // a checkout, not the image
  }
  const info = JSON.parse(text) as { revision?: unknown };
  return typeof info.revision === "string" && /^[0-9A-Za-z.-]+$/.test(info.revision)
    ? info.revision
    : undefined;
}

const revision = imageRevision();

export const SERVER_VERSION: string = revision ? `${pkg.version}+${revision}` : pkg.version;
