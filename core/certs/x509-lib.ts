// @peculiar/x509 needs the reflect-metadata polyfill loaded before it and a WebCrypto provider;
// this module does both once so every importer gets a ready library.
import "reflect-metadata";
import { webcrypto } from "node:crypto";
import * as x509 from "@peculiar/x509";

x509.cryptoProvider.set(webcrypto as unknown as Crypto);

export { x509 };
