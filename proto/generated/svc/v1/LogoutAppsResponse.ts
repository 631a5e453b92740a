// Original file: svc/v1/auth.proto

export interface LogoutAppsResponse {
  ended?: number;
}

export interface LogoutAppsResponse__Output {
  ended: number;
}
