// Original file: svc/v1/auth.proto

export interface LogoutAppsRequest {
  app_name?: string;
}

export interface LogoutAppsRequest__Output {
  app_name: string;
}
