// The /web/reset page: sends the one-time token from this page's URL with the new password to
// POST /v1/webapi/password/reset (no session, no cookie needed), then points to the login page.
const token = new URLSearchParams(location.search).get("token") ?? "";
// The token is a secret: drop it from the address bar and history right away.
history.replaceState(null, "", location.pathname);

const form = document.getElementById("reset");
const error = document.getElementById("error");

form.addEventListener("submit", async (event) => {
  event.preventDefault();
  error.textContent = "";
  const password = document.getElementById("password").value;
  if (password !== document.getElementById("again").value) {
    error.textContent = "The two passwords differ.";
    return;
  }
  const res = await fetch("/v1/webapi/password/reset", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ token, password }),
  });
  const body = await res.json().catch(() => ({}));
  if (!res.ok) {
    error.textContent = body?.error?.message ?? `HTTP ${res.status}`;
    return;
  }
  form.hidden = true;
  document.getElementById("user").textContent = body.username;
  document.getElementById("done").hidden = false;
});
