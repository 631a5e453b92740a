// The running server version, read once from package.json (the single place it is set).
import { readFileSync } from "node:fs";

const pkg = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as {
  version: string;
};

export const SERVER_VERSION: string = pkg.version;
