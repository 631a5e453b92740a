// The one-time reset token leaves the address bar (and history) before anything else runs, even
// before the reset page's own code has loaded: the page reads it from here.
let token = "";
if (location.pathname === "/web/reset") {
  token = new URLSearchParams(location.search).get("token") ?? "";
  history.replaceState(null, "", location.pathname);
}

export function resetToken(): string {
  return token;
}
