// Password login (POST /v1/webapi/login). The session arrives as HttpOnly cookies; the page then
// goes to `next` when it is one of our own /web/ pages (never an outside address).
import { api } from "./common.js";

const form = document.getElementById("login");
const error = document.getElementById("error");

function nextPage() {
  const next = new URLSearchParams(location.search).get("next") ?? "";
  return /^\/web\/[^/\\]/.test(next) || next === "/web/" ? next : "/web/";
}

form.addEventListener("submit", async (event) => {
  event.preventDefault();
  error.textContent = "";
  const username = document.getElementById("username").value;
  const password = document.getElementById("password").value;
  try {
    await api("/v1/webapi/login", { method: "POST", body: { username, password } });
    location.assign(nextPage());
  } catch (err) {
    error.textContent =
      err.code === "mfa_required"
        ? "This account needs a security key: sign in with the CLI (WebAuthn is not on this page yet)."
        : err.message;
  }
});
