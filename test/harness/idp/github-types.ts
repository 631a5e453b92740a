// What the GitHub stand-in process (github-server.ts) is configured with, shared with github.ts.

/** An OAuth app registered at the stand-in. */
export interface GithubTestApp {
  client_id: string;
  client_secret: string;
  /** the app's "Authorization callback URL"; a redirect_uri must be it or a path below it */
  callback_url: string;
}

export interface GithubTestOrg {
  login: string;
  /** a public membership is listed by /user/orgs even without the read:org scope */
  public?: boolean;
  /** team slugs the user belongs to in this org */
  teams?: string[];
}

export interface GithubTestUser {
  login: string;
  password: string;
  id: number;
  name?: string;
  /** primary, verified email (the public `email` of /user only when `publicEmail`) */
  email?: string;
  publicEmail?: boolean;
  orgs?: GithubTestOrg[];
}

export interface GithubServerConfig {
  tls: { key: string; cert: string };
  apps: GithubTestApp[];
  users: GithubTestUser[];
  /** refuse an authorization request without an S256 code_challenge (GitHub does not); default true */
  requirePkce?: boolean;
}
