// Original file: svc/v1/auth.proto

import type * as grpc from "@grpc/grpc-js";
import type { MethodDefinition } from "@grpc/proto-loader";
import type {
  AgentIdentityCredentials as _svc_v1_AgentIdentityCredentials,
  AgentIdentityCredentials__Output as _svc_v1_AgentIdentityCredentials__Output,
} from "../../svc/v1/AgentIdentityCredentials.ts";
import type {
  AppSessionGrant as _svc_v1_AppSessionGrant,
  AppSessionGrant__Output as _svc_v1_AppSessionGrant__Output,
} from "../../svc/v1/AppSessionGrant.ts";
import type {
  AuditEvent as _svc_v1_AuditEvent,
  AuditEvent__Output as _svc_v1_AuditEvent__Output,
} from "../../svc/v1/AuditEvent.ts";
import type {
  AuthenticateLocalRequest as _svc_v1_AuthenticateLocalRequest,
  AuthenticateLocalRequest__Output as _svc_v1_AuthenticateLocalRequest__Output,
} from "../../svc/v1/AuthenticateLocalRequest.ts";
import type {
  AuthenticateLocalResponse as _svc_v1_AuthenticateLocalResponse,
  AuthenticateLocalResponse__Output as _svc_v1_AuthenticateLocalResponse__Output,
} from "../../svc/v1/AuthenticateLocalResponse.ts";
import type {
  AuthenticateSPIFFERequest as _svc_v1_AuthenticateSPIFFERequest,
  AuthenticateSPIFFERequest__Output as _svc_v1_AuthenticateSPIFFERequest__Output,
} from "../../svc/v1/AuthenticateSPIFFERequest.ts";
import type {
  AuthenticateSPIFFEResponse as _svc_v1_AuthenticateSPIFFEResponse,
  AuthenticateSPIFFEResponse__Output as _svc_v1_AuthenticateSPIFFEResponse__Output,
} from "../../svc/v1/AuthenticateSPIFFEResponse.ts";
import type {
  AuthorizeNodeLoginRequest as _svc_v1_AuthorizeNodeLoginRequest,
  AuthorizeNodeLoginRequest__Output as _svc_v1_AuthorizeNodeLoginRequest__Output,
} from "../../svc/v1/AuthorizeNodeLoginRequest.ts";
import type {
  AuthorizeSshLoginRequest as _svc_v1_AuthorizeSshLoginRequest,
  AuthorizeSshLoginRequest__Output as _svc_v1_AuthorizeSshLoginRequest__Output,
} from "../../svc/v1/AuthorizeSshLoginRequest.ts";
import type {
  AuthorizeSshLoginResponse as _svc_v1_AuthorizeSshLoginResponse,
  AuthorizeSshLoginResponse__Output as _svc_v1_AuthorizeSshLoginResponse__Output,
} from "../../svc/v1/AuthorizeSshLoginResponse.ts";
import type {
  BeginWebAuthnLoginRequest as _svc_v1_BeginWebAuthnLoginRequest,
  BeginWebAuthnLoginRequest__Output as _svc_v1_BeginWebAuthnLoginRequest__Output,
} from "../../svc/v1/BeginWebAuthnLoginRequest.ts";
import type {
  BeginWebAuthnRegistrationRequest as _svc_v1_BeginWebAuthnRegistrationRequest,
  BeginWebAuthnRegistrationRequest__Output as _svc_v1_BeginWebAuthnRegistrationRequest__Output,
} from "../../svc/v1/BeginWebAuthnRegistrationRequest.ts";
import type {
  BindSSOAuthRequestRequest as _svc_v1_BindSSOAuthRequestRequest,
  BindSSOAuthRequestRequest__Output as _svc_v1_BindSSOAuthRequestRequest__Output,
} from "../../svc/v1/BindSSOAuthRequestRequest.ts";
import type {
  BootstrapAgentIdentityRequest as _svc_v1_BootstrapAgentIdentityRequest,
  BootstrapAgentIdentityRequest__Output as _svc_v1_BootstrapAgentIdentityRequest__Output,
} from "../../svc/v1/BootstrapAgentIdentityRequest.ts";
import type {
  CertAuthorityStatus as _svc_v1_CertAuthorityStatus,
  CertAuthorityStatus__Output as _svc_v1_CertAuthorityStatus__Output,
} from "../../svc/v1/CertAuthorityStatus.ts";
import type {
  CheckNodeRegisteredRequest as _svc_v1_CheckNodeRegisteredRequest,
  CheckNodeRegisteredRequest__Output as _svc_v1_CheckNodeRegisteredRequest__Output,
} from "../../svc/v1/CheckNodeRegisteredRequest.ts";
import type {
  CheckNodeRegisteredResponse as _svc_v1_CheckNodeRegisteredResponse,
  CheckNodeRegisteredResponse__Output as _svc_v1_CheckNodeRegisteredResponse__Output,
} from "../../svc/v1/CheckNodeRegisteredResponse.ts";
import type {
  ClusterInfo as _svc_v1_ClusterInfo,
  ClusterInfo__Output as _svc_v1_ClusterInfo__Output,
} from "../../svc/v1/ClusterInfo.ts";
import type {
  CreateAgentIdentityRequest as _svc_v1_CreateAgentIdentityRequest,
  CreateAgentIdentityRequest__Output as _svc_v1_CreateAgentIdentityRequest__Output,
} from "../../svc/v1/CreateAgentIdentityRequest.ts";
import type {
  CreateAgentIdentityResponse as _svc_v1_CreateAgentIdentityResponse,
  CreateAgentIdentityResponse__Output as _svc_v1_CreateAgentIdentityResponse__Output,
} from "../../svc/v1/CreateAgentIdentityResponse.ts";
import type {
  CreateAppSessionRequest as _svc_v1_CreateAppSessionRequest,
  CreateAppSessionRequest__Output as _svc_v1_CreateAppSessionRequest__Output,
} from "../../svc/v1/CreateAppSessionRequest.ts";
import type {
  CreateAppSessionResponse as _svc_v1_CreateAppSessionResponse,
  CreateAppSessionResponse__Output as _svc_v1_CreateAppSessionResponse__Output,
} from "../../svc/v1/CreateAppSessionResponse.ts";
import type {
  CreateJoinTokenRequest as _svc_v1_CreateJoinTokenRequest,
  CreateJoinTokenRequest__Output as _svc_v1_CreateJoinTokenRequest__Output,
} from "../../svc/v1/CreateJoinTokenRequest.ts";
import type {
  CreateJoinTokenResponse as _svc_v1_CreateJoinTokenResponse,
  CreateJoinTokenResponse__Output as _svc_v1_CreateJoinTokenResponse__Output,
} from "../../svc/v1/CreateJoinTokenResponse.ts";
import type {
  CreateLockRequest as _svc_v1_CreateLockRequest,
  CreateLockRequest__Output as _svc_v1_CreateLockRequest__Output,
} from "../../svc/v1/CreateLockRequest.ts";
import type {
  CreatePasswordResetRequest as _svc_v1_CreatePasswordResetRequest,
  CreatePasswordResetRequest__Output as _svc_v1_CreatePasswordResetRequest__Output,
} from "../../svc/v1/CreatePasswordResetRequest.ts";
import type {
  CreateSSOAuthRequestRequest as _svc_v1_CreateSSOAuthRequestRequest,
  CreateSSOAuthRequestRequest__Output as _svc_v1_CreateSSOAuthRequestRequest__Output,
} from "../../svc/v1/CreateSSOAuthRequestRequest.ts";
import type {
  CreateUserRequest as _svc_v1_CreateUserRequest,
  CreateUserRequest__Output as _svc_v1_CreateUserRequest__Output,
} from "../../svc/v1/CreateUserRequest.ts";
import type {
  CreateUserResponse as _svc_v1_CreateUserResponse,
  CreateUserResponse__Output as _svc_v1_CreateUserResponse__Output,
} from "../../svc/v1/CreateUserResponse.ts";
import type {
  DeleteAgentIdentityRequest as _svc_v1_DeleteAgentIdentityRequest,
  DeleteAgentIdentityRequest__Output as _svc_v1_DeleteAgentIdentityRequest__Output,
} from "../../svc/v1/DeleteAgentIdentityRequest.ts";
import type {
  DeleteAgentIdentityResponse as _svc_v1_DeleteAgentIdentityResponse,
  DeleteAgentIdentityResponse__Output as _svc_v1_DeleteAgentIdentityResponse__Output,
} from "../../svc/v1/DeleteAgentIdentityResponse.ts";
import type {
  DeleteAppSessionRequest as _svc_v1_DeleteAppSessionRequest,
  DeleteAppSessionRequest__Output as _svc_v1_DeleteAppSessionRequest__Output,
} from "../../svc/v1/DeleteAppSessionRequest.ts";
import type {
  DeleteAppSessionResponse as _svc_v1_DeleteAppSessionResponse,
  DeleteAppSessionResponse__Output as _svc_v1_DeleteAppSessionResponse__Output,
} from "../../svc/v1/DeleteAppSessionResponse.ts";
import type {
  DeleteJoinTokenRequest as _svc_v1_DeleteJoinTokenRequest,
  DeleteJoinTokenRequest__Output as _svc_v1_DeleteJoinTokenRequest__Output,
} from "../../svc/v1/DeleteJoinTokenRequest.ts";
import type {
  DeleteJoinTokenResponse as _svc_v1_DeleteJoinTokenResponse,
  DeleteJoinTokenResponse__Output as _svc_v1_DeleteJoinTokenResponse__Output,
} from "../../svc/v1/DeleteJoinTokenResponse.ts";
import type {
  DeleteLockRequest as _svc_v1_DeleteLockRequest,
  DeleteLockRequest__Output as _svc_v1_DeleteLockRequest__Output,
} from "../../svc/v1/DeleteLockRequest.ts";
import type {
  DeleteLockResponse as _svc_v1_DeleteLockResponse,
  DeleteLockResponse__Output as _svc_v1_DeleteLockResponse__Output,
} from "../../svc/v1/DeleteLockResponse.ts";
import type {
  DeleteNodeRequest as _svc_v1_DeleteNodeRequest,
  DeleteNodeRequest__Output as _svc_v1_DeleteNodeRequest__Output,
} from "../../svc/v1/DeleteNodeRequest.ts";
import type {
  DeleteNodeResponse as _svc_v1_DeleteNodeResponse,
  DeleteNodeResponse__Output as _svc_v1_DeleteNodeResponse__Output,
} from "../../svc/v1/DeleteNodeResponse.ts";
import type {
  DeleteSessionRequest as _svc_v1_DeleteSessionRequest,
  DeleteSessionRequest__Output as _svc_v1_DeleteSessionRequest__Output,
} from "../../svc/v1/DeleteSessionRequest.ts";
import type {
  DeleteSessionResponse as _svc_v1_DeleteSessionResponse,
  DeleteSessionResponse__Output as _svc_v1_DeleteSessionResponse__Output,
} from "../../svc/v1/DeleteSessionResponse.ts";
import type {
  DeleteUserRequest as _svc_v1_DeleteUserRequest,
  DeleteUserRequest__Output as _svc_v1_DeleteUserRequest__Output,
} from "../../svc/v1/DeleteUserRequest.ts";
import type {
  DeleteUserResponse as _svc_v1_DeleteUserResponse,
  DeleteUserResponse__Output as _svc_v1_DeleteUserResponse__Output,
} from "../../svc/v1/DeleteUserResponse.ts";
import type {
  DeleteWebAuthnDeviceRequest as _svc_v1_DeleteWebAuthnDeviceRequest,
  DeleteWebAuthnDeviceRequest__Output as _svc_v1_DeleteWebAuthnDeviceRequest__Output,
} from "../../svc/v1/DeleteWebAuthnDeviceRequest.ts";
import type {
  DeleteWebAuthnDeviceResponse as _svc_v1_DeleteWebAuthnDeviceResponse,
  DeleteWebAuthnDeviceResponse__Output as _svc_v1_DeleteWebAuthnDeviceResponse__Output,
} from "../../svc/v1/DeleteWebAuthnDeviceResponse.ts";
import type {
  EmitAuditEventRequest as _svc_v1_EmitAuditEventRequest,
  EmitAuditEventRequest__Output as _svc_v1_EmitAuditEventRequest__Output,
} from "../../svc/v1/EmitAuditEventRequest.ts";
import type {
  ExchangeAppSessionRequest as _svc_v1_ExchangeAppSessionRequest,
  ExchangeAppSessionRequest__Output as _svc_v1_ExchangeAppSessionRequest__Output,
} from "../../svc/v1/ExchangeAppSessionRequest.ts";
import type {
  ExchangeSSOCodeRequest as _svc_v1_ExchangeSSOCodeRequest,
  ExchangeSSOCodeRequest__Output as _svc_v1_ExchangeSSOCodeRequest__Output,
} from "../../svc/v1/ExchangeSSOCodeRequest.ts";
import type {
  ExportKrlRequest as _svc_v1_ExportKrlRequest,
  ExportKrlRequest__Output as _svc_v1_ExportKrlRequest__Output,
} from "../../svc/v1/ExportKrlRequest.ts";
import type {
  ExportKrlResponse as _svc_v1_ExportKrlResponse,
  ExportKrlResponse__Output as _svc_v1_ExportKrlResponse__Output,
} from "../../svc/v1/ExportKrlResponse.ts";
import type {
  FinishWebAuthnLoginRequest as _svc_v1_FinishWebAuthnLoginRequest,
  FinishWebAuthnLoginRequest__Output as _svc_v1_FinishWebAuthnLoginRequest__Output,
} from "../../svc/v1/FinishWebAuthnLoginRequest.ts";
import type {
  FinishWebAuthnRegistrationRequest as _svc_v1_FinishWebAuthnRegistrationRequest,
  FinishWebAuthnRegistrationRequest__Output as _svc_v1_FinishWebAuthnRegistrationRequest__Output,
} from "../../svc/v1/FinishWebAuthnRegistrationRequest.ts";
import type {
  GetAppSessionRequest as _svc_v1_GetAppSessionRequest,
  GetAppSessionRequest__Output as _svc_v1_GetAppSessionRequest__Output,
} from "../../svc/v1/GetAppSessionRequest.ts";
import type {
  GetClusterInfoRequest as _svc_v1_GetClusterInfoRequest,
  GetClusterInfoRequest__Output as _svc_v1_GetClusterInfoRequest__Output,
} from "../../svc/v1/GetClusterInfoRequest.ts";
import type {
  GetJoinTokenUsageRequest as _svc_v1_GetJoinTokenUsageRequest,
  GetJoinTokenUsageRequest__Output as _svc_v1_GetJoinTokenUsageRequest__Output,
} from "../../svc/v1/GetJoinTokenUsageRequest.ts";
import type {
  GetPublicKeysRequest as _svc_v1_GetPublicKeysRequest,
  GetPublicKeysRequest__Output as _svc_v1_GetPublicKeysRequest__Output,
} from "../../svc/v1/GetPublicKeysRequest.ts";
import type {
  GetRecordingRequest as _svc_v1_GetRecordingRequest,
  GetRecordingRequest__Output as _svc_v1_GetRecordingRequest__Output,
} from "../../svc/v1/GetRecordingRequest.ts";
import type {
  GetRecordingResponse as _svc_v1_GetRecordingResponse,
  GetRecordingResponse__Output as _svc_v1_GetRecordingResponse__Output,
} from "../../svc/v1/GetRecordingResponse.ts";
import type {
  GetSessionRequest as _svc_v1_GetSessionRequest,
  GetSessionRequest__Output as _svc_v1_GetSessionRequest__Output,
} from "../../svc/v1/GetSessionRequest.ts";
import type {
  HeartbeatRequest as _svc_v1_HeartbeatRequest,
  HeartbeatRequest__Output as _svc_v1_HeartbeatRequest__Output,
} from "../../svc/v1/HeartbeatRequest.ts";
import type {
  HeartbeatResponse as _svc_v1_HeartbeatResponse,
  HeartbeatResponse__Output as _svc_v1_HeartbeatResponse__Output,
} from "../../svc/v1/HeartbeatResponse.ts";
import type {
  InventoryEvent as _svc_v1_InventoryEvent,
  InventoryEvent__Output as _svc_v1_InventoryEvent__Output,
} from "../../svc/v1/InventoryEvent.ts";
import type {
  IssueUserCertsRequest as _svc_v1_IssueUserCertsRequest,
  IssueUserCertsRequest__Output as _svc_v1_IssueUserCertsRequest__Output,
} from "../../svc/v1/IssueUserCertsRequest.ts";
import type {
  IssueUserCertsResponse as _svc_v1_IssueUserCertsResponse,
  IssueUserCertsResponse__Output as _svc_v1_IssueUserCertsResponse__Output,
} from "../../svc/v1/IssueUserCertsResponse.ts";
import type {
  IssueWorkloadSVIDRequest as _svc_v1_IssueWorkloadSVIDRequest,
  IssueWorkloadSVIDRequest__Output as _svc_v1_IssueWorkloadSVIDRequest__Output,
} from "../../svc/v1/IssueWorkloadSVIDRequest.ts";
import type {
  IssueWorkloadSVIDResponse as _svc_v1_IssueWorkloadSVIDResponse,
  IssueWorkloadSVIDResponse__Output as _svc_v1_IssueWorkloadSVIDResponse__Output,
} from "../../svc/v1/IssueWorkloadSVIDResponse.ts";
import type {
  JoinTokenUsage as _svc_v1_JoinTokenUsage,
  JoinTokenUsage__Output as _svc_v1_JoinTokenUsage__Output,
} from "../../svc/v1/JoinTokenUsage.ts";
import type {
  ListAgentIdentitiesRequest as _svc_v1_ListAgentIdentitiesRequest,
  ListAgentIdentitiesRequest__Output as _svc_v1_ListAgentIdentitiesRequest__Output,
} from "../../svc/v1/ListAgentIdentitiesRequest.ts";
import type {
  ListAgentIdentitiesResponse as _svc_v1_ListAgentIdentitiesResponse,
  ListAgentIdentitiesResponse__Output as _svc_v1_ListAgentIdentitiesResponse__Output,
} from "../../svc/v1/ListAgentIdentitiesResponse.ts";
import type {
  ListAppsRequest as _svc_v1_ListAppsRequest,
  ListAppsRequest__Output as _svc_v1_ListAppsRequest__Output,
} from "../../svc/v1/ListAppsRequest.ts";
import type {
  ListAppsResponse as _svc_v1_ListAppsResponse,
  ListAppsResponse__Output as _svc_v1_ListAppsResponse__Output,
} from "../../svc/v1/ListAppsResponse.ts";
import type {
  ListCertAuthoritiesRequest as _svc_v1_ListCertAuthoritiesRequest,
  ListCertAuthoritiesRequest__Output as _svc_v1_ListCertAuthoritiesRequest__Output,
} from "../../svc/v1/ListCertAuthoritiesRequest.ts";
import type {
  ListCertAuthoritiesResponse as _svc_v1_ListCertAuthoritiesResponse,
  ListCertAuthoritiesResponse__Output as _svc_v1_ListCertAuthoritiesResponse__Output,
} from "../../svc/v1/ListCertAuthoritiesResponse.ts";
import type {
  ListJoinTokensRequest as _svc_v1_ListJoinTokensRequest,
  ListJoinTokensRequest__Output as _svc_v1_ListJoinTokensRequest__Output,
} from "../../svc/v1/ListJoinTokensRequest.ts";
import type {
  ListJoinTokensResponse as _svc_v1_ListJoinTokensResponse,
  ListJoinTokensResponse__Output as _svc_v1_ListJoinTokensResponse__Output,
} from "../../svc/v1/ListJoinTokensResponse.ts";
import type {
  ListLocksRequest as _svc_v1_ListLocksRequest,
  ListLocksRequest__Output as _svc_v1_ListLocksRequest__Output,
} from "../../svc/v1/ListLocksRequest.ts";
import type {
  ListLocksResponse as _svc_v1_ListLocksResponse,
  ListLocksResponse__Output as _svc_v1_ListLocksResponse__Output,
} from "../../svc/v1/ListLocksResponse.ts";
import type {
  ListNodesRequest as _svc_v1_ListNodesRequest,
  ListNodesRequest__Output as _svc_v1_ListNodesRequest__Output,
} from "../../svc/v1/ListNodesRequest.ts";
import type {
  ListNodesResponse as _svc_v1_ListNodesResponse,
  ListNodesResponse__Output as _svc_v1_ListNodesResponse__Output,
} from "../../svc/v1/ListNodesResponse.ts";
import type {
  ListRecordingsRequest as _svc_v1_ListRecordingsRequest,
  ListRecordingsRequest__Output as _svc_v1_ListRecordingsRequest__Output,
} from "../../svc/v1/ListRecordingsRequest.ts";
import type {
  ListRecordingsResponse as _svc_v1_ListRecordingsResponse,
  ListRecordingsResponse__Output as _svc_v1_ListRecordingsResponse__Output,
} from "../../svc/v1/ListRecordingsResponse.ts";
import type {
  ListRolesRequest as _svc_v1_ListRolesRequest,
  ListRolesRequest__Output as _svc_v1_ListRolesRequest__Output,
} from "../../svc/v1/ListRolesRequest.ts";
import type {
  ListRolesResponse as _svc_v1_ListRolesResponse,
  ListRolesResponse__Output as _svc_v1_ListRolesResponse__Output,
} from "../../svc/v1/ListRolesResponse.ts";
import type {
  ListUsersRequest as _svc_v1_ListUsersRequest,
  ListUsersRequest__Output as _svc_v1_ListUsersRequest__Output,
} from "../../svc/v1/ListUsersRequest.ts";
import type {
  ListUsersResponse as _svc_v1_ListUsersResponse,
  ListUsersResponse__Output as _svc_v1_ListUsersResponse__Output,
} from "../../svc/v1/ListUsersResponse.ts";
import type {
  ListWebAuthnDevicesRequest as _svc_v1_ListWebAuthnDevicesRequest,
  ListWebAuthnDevicesRequest__Output as _svc_v1_ListWebAuthnDevicesRequest__Output,
} from "../../svc/v1/ListWebAuthnDevicesRequest.ts";
import type {
  ListWebAuthnDevicesResponse as _svc_v1_ListWebAuthnDevicesResponse,
  ListWebAuthnDevicesResponse__Output as _svc_v1_ListWebAuthnDevicesResponse__Output,
} from "../../svc/v1/ListWebAuthnDevicesResponse.ts";
import type { Lock as _svc_v1_Lock, Lock__Output as _svc_v1_Lock__Output } from "../../svc/v1/Lock.ts";
import type {
  LogoutAppsRequest as _svc_v1_LogoutAppsRequest,
  LogoutAppsRequest__Output as _svc_v1_LogoutAppsRequest__Output,
} from "../../svc/v1/LogoutAppsRequest.ts";
import type {
  LogoutAppsResponse as _svc_v1_LogoutAppsResponse,
  LogoutAppsResponse__Output as _svc_v1_LogoutAppsResponse__Output,
} from "../../svc/v1/LogoutAppsResponse.ts";
import type { Node as _svc_v1_Node, Node__Output as _svc_v1_Node__Output } from "../../svc/v1/Node.ts";
import type {
  PasswordResetToken as _svc_v1_PasswordResetToken,
  PasswordResetToken__Output as _svc_v1_PasswordResetToken__Output,
} from "../../svc/v1/PasswordResetToken.ts";
import type {
  PublicKeys as _svc_v1_PublicKeys,
  PublicKeys__Output as _svc_v1_PublicKeys__Output,
} from "../../svc/v1/PublicKeys.ts";
import type {
  RegisterAgentRequest as _svc_v1_RegisterAgentRequest,
  RegisterAgentRequest__Output as _svc_v1_RegisterAgentRequest__Output,
} from "../../svc/v1/RegisterAgentRequest.ts";
import type {
  RegisterAgentResponse as _svc_v1_RegisterAgentResponse,
  RegisterAgentResponse__Output as _svc_v1_RegisterAgentResponse__Output,
} from "../../svc/v1/RegisterAgentResponse.ts";
import type {
  RegisterUsingIAMMethodRequest as _svc_v1_RegisterUsingIAMMethodRequest,
  RegisterUsingIAMMethodRequest__Output as _svc_v1_RegisterUsingIAMMethodRequest__Output,
} from "../../svc/v1/RegisterUsingIAMMethodRequest.ts";
import type {
  RegisterUsingIAMMethodResponse as _svc_v1_RegisterUsingIAMMethodResponse,
  RegisterUsingIAMMethodResponse__Output as _svc_v1_RegisterUsingIAMMethodResponse__Output,
} from "../../svc/v1/RegisterUsingIAMMethodResponse.ts";
import type {
  RenameWebAuthnDeviceRequest as _svc_v1_RenameWebAuthnDeviceRequest,
  RenameWebAuthnDeviceRequest__Output as _svc_v1_RenameWebAuthnDeviceRequest__Output,
} from "../../svc/v1/RenameWebAuthnDeviceRequest.ts";
import type {
  RenewAgentIdentityRequest as _svc_v1_RenewAgentIdentityRequest,
  RenewAgentIdentityRequest__Output as _svc_v1_RenewAgentIdentityRequest__Output,
} from "../../svc/v1/RenewAgentIdentityRequest.ts";
import type {
  RenewNodeCredentialsRequest as _svc_v1_RenewNodeCredentialsRequest,
  RenewNodeCredentialsRequest__Output as _svc_v1_RenewNodeCredentialsRequest__Output,
} from "../../svc/v1/RenewNodeCredentialsRequest.ts";
import type {
  RenewNodeCredentialsResponse as _svc_v1_RenewNodeCredentialsResponse,
  RenewNodeCredentialsResponse__Output as _svc_v1_RenewNodeCredentialsResponse__Output,
} from "../../svc/v1/RenewNodeCredentialsResponse.ts";
import type {
  ResetPasswordRequest as _svc_v1_ResetPasswordRequest,
  ResetPasswordRequest__Output as _svc_v1_ResetPasswordRequest__Output,
} from "../../svc/v1/ResetPasswordRequest.ts";
import type {
  ResetPasswordResponse as _svc_v1_ResetPasswordResponse,
  ResetPasswordResponse__Output as _svc_v1_ResetPasswordResponse__Output,
} from "../../svc/v1/ResetPasswordResponse.ts";
import type {
  RevokeUserSessionsRequest as _svc_v1_RevokeUserSessionsRequest,
  RevokeUserSessionsRequest__Output as _svc_v1_RevokeUserSessionsRequest__Output,
} from "../../svc/v1/RevokeUserSessionsRequest.ts";
import type {
  RevokeUserSessionsResponse as _svc_v1_RevokeUserSessionsResponse,
  RevokeUserSessionsResponse__Output as _svc_v1_RevokeUserSessionsResponse__Output,
} from "../../svc/v1/RevokeUserSessionsResponse.ts";
import type {
  RotateCertAuthorityRequest as _svc_v1_RotateCertAuthorityRequest,
  RotateCertAuthorityRequest__Output as _svc_v1_RotateCertAuthorityRequest__Output,
} from "../../svc/v1/RotateCertAuthorityRequest.ts";
import type {
  SSOAuthRequest as _svc_v1_SSOAuthRequest,
  SSOAuthRequest__Output as _svc_v1_SSOAuthRequest__Output,
} from "../../svc/v1/SSOAuthRequest.ts";
import type {
  SearchAuditEventsRequest as _svc_v1_SearchAuditEventsRequest,
  SearchAuditEventsRequest__Output as _svc_v1_SearchAuditEventsRequest__Output,
} from "../../svc/v1/SearchAuditEventsRequest.ts";
import type {
  SearchAuditEventsResponse as _svc_v1_SearchAuditEventsResponse,
  SearchAuditEventsResponse__Output as _svc_v1_SearchAuditEventsResponse__Output,
} from "../../svc/v1/SearchAuditEventsResponse.ts";
import type {
  SessionEvent as _svc_v1_SessionEvent,
  SessionEvent__Output as _svc_v1_SessionEvent__Output,
} from "../../svc/v1/SessionEvent.ts";
import type {
  SessionView as _svc_v1_SessionView,
  SessionView__Output as _svc_v1_SessionView__Output,
} from "../../svc/v1/SessionView.ts";
import type {
  TrustSnapshot as _svc_v1_TrustSnapshot,
  TrustSnapshot__Output as _svc_v1_TrustSnapshot__Output,
} from "../../svc/v1/TrustSnapshot.ts";
import type {
  UploadRecordingRequest as _svc_v1_UploadRecordingRequest,
  UploadRecordingRequest__Output as _svc_v1_UploadRecordingRequest__Output,
} from "../../svc/v1/UploadRecordingRequest.ts";
import type {
  UploadRecordingResponse as _svc_v1_UploadRecordingResponse,
  UploadRecordingResponse__Output as _svc_v1_UploadRecordingResponse__Output,
} from "../../svc/v1/UploadRecordingResponse.ts";
import type {
  ValidateSSOResponseRequest as _svc_v1_ValidateSSOResponseRequest,
  ValidateSSOResponseRequest__Output as _svc_v1_ValidateSSOResponseRequest__Output,
} from "../../svc/v1/ValidateSSOResponseRequest.ts";
import type {
  ValidateSSOResponseResult as _svc_v1_ValidateSSOResponseResult,
  ValidateSSOResponseResult__Output as _svc_v1_ValidateSSOResponseResult__Output,
} from "../../svc/v1/ValidateSSOResponseResult.ts";
import type {
  WatchInventoryRequest as _svc_v1_WatchInventoryRequest,
  WatchInventoryRequest__Output as _svc_v1_WatchInventoryRequest__Output,
} from "../../svc/v1/WatchInventoryRequest.ts";
import type {
  WatchSessionsRequest as _svc_v1_WatchSessionsRequest,
  WatchSessionsRequest__Output as _svc_v1_WatchSessionsRequest__Output,
} from "../../svc/v1/WatchSessionsRequest.ts";
import type {
  WatchTrustRequest as _svc_v1_WatchTrustRequest,
  WatchTrustRequest__Output as _svc_v1_WatchTrustRequest__Output,
} from "../../svc/v1/WatchTrustRequest.ts";
import type {
  WebAuthnChallenge as _svc_v1_WebAuthnChallenge,
  WebAuthnChallenge__Output as _svc_v1_WebAuthnChallenge__Output,
} from "../../svc/v1/WebAuthnChallenge.ts";
import type {
  WebAuthnDevice as _svc_v1_WebAuthnDevice,
  WebAuthnDevice__Output as _svc_v1_WebAuthnDevice__Output,
} from "../../svc/v1/WebAuthnDevice.ts";

export interface AuthServiceClient extends grpc.Client {
  AuthenticateLocal(
    argument: _svc_v1_AuthenticateLocalRequest,
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_AuthenticateLocalResponse__Output>,
  ): grpc.ClientUnaryCall;
  AuthenticateLocal(
    argument: _svc_v1_AuthenticateLocalRequest,
    metadata: grpc.Metadata,
    callback: grpc.requestCallback<_svc_v1_AuthenticateLocalResponse__Output>,
  ): grpc.ClientUnaryCall;
  AuthenticateLocal(
    argument: _svc_v1_AuthenticateLocalRequest,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_AuthenticateLocalResponse__Output>,
  ): grpc.ClientUnaryCall;
  AuthenticateLocal(
    argument: _svc_v1_AuthenticateLocalRequest,
    callback: grpc.requestCallback<_svc_v1_AuthenticateLocalResponse__Output>,
  ): grpc.ClientUnaryCall;
  authenticateLocal(
    argument: _svc_v1_AuthenticateLocalRequest,
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_AuthenticateLocalResponse__Output>,
  ): grpc.ClientUnaryCall;
  authenticateLocal(
    argument: _svc_v1_AuthenticateLocalRequest,
    metadata: grpc.Metadata,
    callback: grpc.requestCallback<_svc_v1_AuthenticateLocalResponse__Output>,
  ): grpc.ClientUnaryCall;
  authenticateLocal(
    argument: _svc_v1_AuthenticateLocalRequest,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_AuthenticateLocalResponse__Output>,
  ): grpc.ClientUnaryCall;
  authenticateLocal(
    argument: _svc_v1_AuthenticateLocalRequest,
    callback: grpc.requestCallback<_svc_v1_AuthenticateLocalResponse__Output>,
  ): grpc.ClientUnaryCall;

  AuthenticateSPIFFE(
    argument: _svc_v1_AuthenticateSPIFFERequest,
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_AuthenticateSPIFFEResponse__Output>,
  ): grpc.ClientUnaryCall;
  AuthenticateSPIFFE(
    argument: _svc_v1_AuthenticateSPIFFERequest,
    metadata: grpc.Metadata,
    callback: grpc.requestCallback<_svc_v1_AuthenticateSPIFFEResponse__Output>,
  ): grpc.ClientUnaryCall;
  AuthenticateSPIFFE(
    argument: _svc_v1_AuthenticateSPIFFERequest,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_AuthenticateSPIFFEResponse__Output>,
  ): grpc.ClientUnaryCall;
  AuthenticateSPIFFE(
    argument: _svc_v1_AuthenticateSPIFFERequest,
    callback: grpc.requestCallback<_svc_v1_AuthenticateSPIFFEResponse__Output>,
  ): grpc.ClientUnaryCall;
  authenticateSpiffe(
    argument: _svc_v1_AuthenticateSPIFFERequest,
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_AuthenticateSPIFFEResponse__Output>,
  ): grpc.ClientUnaryCall;
  authenticateSpiffe(
    argument: _svc_v1_AuthenticateSPIFFERequest,
    metadata: grpc.Metadata,
    callback: grpc.requestCallback<_svc_v1_AuthenticateSPIFFEResponse__Output>,
  ): grpc.ClientUnaryCall;
  authenticateSpiffe(
    argument: _svc_v1_AuthenticateSPIFFERequest,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_AuthenticateSPIFFEResponse__Output>,
  ): grpc.ClientUnaryCall;
  authenticateSpiffe(
    argument: _svc_v1_AuthenticateSPIFFERequest,
    callback: grpc.requestCallback<_svc_v1_AuthenticateSPIFFEResponse__Output>,
  ): grpc.ClientUnaryCall;

  AuthorizeNodeLogin(
    argument: _svc_v1_AuthorizeNodeLoginRequest,
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_Node__Output>,
  ): grpc.ClientUnaryCall;
  AuthorizeNodeLogin(
    argument: _svc_v1_AuthorizeNodeLoginRequest,
    metadata: grpc.Metadata,
    callback: grpc.requestCallback<_svc_v1_Node__Output>,
  ): grpc.ClientUnaryCall;
  AuthorizeNodeLogin(
    argument: _svc_v1_AuthorizeNodeLoginRequest,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_Node__Output>,
  ): grpc.ClientUnaryCall;
  AuthorizeNodeLogin(
    argument: _svc_v1_AuthorizeNodeLoginRequest,
    callback: grpc.requestCallback<_svc_v1_Node__Output>,
  ): grpc.ClientUnaryCall;
  authorizeNodeLogin(
    argument: _svc_v1_AuthorizeNodeLoginRequest,
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_Node__Output>,
  ): grpc.ClientUnaryCall;
  authorizeNodeLogin(
    argument: _svc_v1_AuthorizeNodeLoginRequest,
    metadata: grpc.Metadata,
    callback: grpc.requestCallback<_svc_v1_Node__Output>,
  ): grpc.ClientUnaryCall;
  authorizeNodeLogin(
    argument: _svc_v1_AuthorizeNodeLoginRequest,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_Node__Output>,
  ): grpc.ClientUnaryCall;
  authorizeNodeLogin(
    argument: _svc_v1_AuthorizeNodeLoginRequest,
    callback: grpc.requestCallback<_svc_v1_Node__Output>,
  ): grpc.ClientUnaryCall;

  AuthorizeSshLogin(
    argument: _svc_v1_AuthorizeSshLoginRequest,
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_AuthorizeSshLoginResponse__Output>,
  ): grpc.ClientUnaryCall;
  AuthorizeSshLogin(
    argument: _svc_v1_AuthorizeSshLoginRequest,
    metadata: grpc.Metadata,
    callback: grpc.requestCallback<_svc_v1_AuthorizeSshLoginResponse__Output>,
  ): grpc.ClientUnaryCall;
  AuthorizeSshLogin(
    argument: _svc_v1_AuthorizeSshLoginRequest,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_AuthorizeSshLoginResponse__Output>,
  ): grpc.ClientUnaryCall;
  AuthorizeSshLogin(
    argument: _svc_v1_AuthorizeSshLoginRequest,
    callback: grpc.requestCallback<_svc_v1_AuthorizeSshLoginResponse__Output>,
  ): grpc.ClientUnaryCall;
  authorizeSshLogin(
    argument: _svc_v1_AuthorizeSshLoginRequest,
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_AuthorizeSshLoginResponse__Output>,
  ): grpc.ClientUnaryCall;
  authorizeSshLogin(
    argument: _svc_v1_AuthorizeSshLoginRequest,
    metadata: grpc.Metadata,
    callback: grpc.requestCallback<_svc_v1_AuthorizeSshLoginResponse__Output>,
  ): grpc.ClientUnaryCall;
  authorizeSshLogin(
    argument: _svc_v1_AuthorizeSshLoginRequest,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_AuthorizeSshLoginResponse__Output>,
  ): grpc.ClientUnaryCall;
  authorizeSshLogin(
    argument: _svc_v1_AuthorizeSshLoginRequest,
    callback: grpc.requestCallback<_svc_v1_AuthorizeSshLoginResponse__Output>,
  ): grpc.ClientUnaryCall;

  BeginWebAuthnLogin(
    argument: _svc_v1_BeginWebAuthnLoginRequest,
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_WebAuthnChallenge__Output>,
  ): grpc.ClientUnaryCall;
  BeginWebAuthnLogin(
    argument: _svc_v1_BeginWebAuthnLoginRequest,
    metadata: grpc.Metadata,
    callback: grpc.requestCallback<_svc_v1_WebAuthnChallenge__Output>,
  ): grpc.ClientUnaryCall;
  BeginWebAuthnLogin(
    argument: _svc_v1_BeginWebAuthnLoginRequest,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_WebAuthnChallenge__Output>,
  ): grpc.ClientUnaryCall;
  BeginWebAuthnLogin(
    argument: _svc_v1_BeginWebAuthnLoginRequest,
    callback: grpc.requestCallback<_svc_v1_WebAuthnChallenge__Output>,
  ): grpc.ClientUnaryCall;
  beginWebAuthnLogin(
    argument: _svc_v1_BeginWebAuthnLoginRequest,
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_WebAuthnChallenge__Output>,
  ): grpc.ClientUnaryCall;
  beginWebAuthnLogin(
    argument: _svc_v1_BeginWebAuthnLoginRequest,
    metadata: grpc.Metadata,
    callback: grpc.requestCallback<_svc_v1_WebAuthnChallenge__Output>,
  ): grpc.ClientUnaryCall;
  beginWebAuthnLogin(
    argument: _svc_v1_BeginWebAuthnLoginRequest,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_WebAuthnChallenge__Output>,
  ): grpc.ClientUnaryCall;
  beginWebAuthnLogin(
    argument: _svc_v1_BeginWebAuthnLoginRequest,
    callback: grpc.requestCallback<_svc_v1_WebAuthnChallenge__Output>,
  ): grpc.ClientUnaryCall;

  BeginWebAuthnRegistration(
    argument: _svc_v1_BeginWebAuthnRegistrationRequest,
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_WebAuthnChallenge__Output>,
  ): grpc.ClientUnaryCall;
  BeginWebAuthnRegistration(
    argument: _svc_v1_BeginWebAuthnRegistrationRequest,
    metadata: grpc.Metadata,
    callback: grpc.requestCallback<_svc_v1_WebAuthnChallenge__Output>,
  ): grpc.ClientUnaryCall;
  BeginWebAuthnRegistration(
    argument: _svc_v1_BeginWebAuthnRegistrationRequest,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_WebAuthnChallenge__Output>,
  ): grpc.ClientUnaryCall;
  BeginWebAuthnRegistration(
    argument: _svc_v1_BeginWebAuthnRegistrationRequest,
    callback: grpc.requestCallback<_svc_v1_WebAuthnChallenge__Output>,
  ): grpc.ClientUnaryCall;
  beginWebAuthnRegistration(
    argument: _svc_v1_BeginWebAuthnRegistrationRequest,
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_WebAuthnChallenge__Output>,
  ): grpc.ClientUnaryCall;
  beginWebAuthnRegistration(
    argument: _svc_v1_BeginWebAuthnRegistrationRequest,
    metadata: grpc.Metadata,
    callback: grpc.requestCallback<_svc_v1_WebAuthnChallenge__Output>,
  ): grpc.ClientUnaryCall;
  beginWebAuthnRegistration(
    argument: _svc_v1_BeginWebAuthnRegistrationRequest,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_WebAuthnChallenge__Output>,
  ): grpc.ClientUnaryCall;
  beginWebAuthnRegistration(
    argument: _svc_v1_BeginWebAuthnRegistrationRequest,
    callback: grpc.requestCallback<_svc_v1_WebAuthnChallenge__Output>,
  ): grpc.ClientUnaryCall;

  BindSSOAuthRequest(
    argument: _svc_v1_BindSSOAuthRequestRequest,
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_SSOAuthRequest__Output>,
  ): grpc.ClientUnaryCall;
  BindSSOAuthRequest(
    argument: _svc_v1_BindSSOAuthRequestRequest,
    metadata: grpc.Metadata,
    callback: grpc.requestCallback<_svc_v1_SSOAuthRequest__Output>,
  ): grpc.ClientUnaryCall;
  BindSSOAuthRequest(
    argument: _svc_v1_BindSSOAuthRequestRequest,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_SSOAuthRequest__Output>,
  ): grpc.ClientUnaryCall;
  BindSSOAuthRequest(
    argument: _svc_v1_BindSSOAuthRequestRequest,
    callback: grpc.requestCallback<_svc_v1_SSOAuthRequest__Output>,
  ): grpc.ClientUnaryCall;
  bindSsoAuthRequest(
    argument: _svc_v1_BindSSOAuthRequestRequest,
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_SSOAuthRequest__Output>,
  ): grpc.ClientUnaryCall;
  bindSsoAuthRequest(
    argument: _svc_v1_BindSSOAuthRequestRequest,
    metadata: grpc.Metadata,
    callback: grpc.requestCallback<_svc_v1_SSOAuthRequest__Output>,
  ): grpc.ClientUnaryCall;
  bindSsoAuthRequest(
    argument: _svc_v1_BindSSOAuthRequestRequest,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_SSOAuthRequest__Output>,
  ): grpc.ClientUnaryCall;
  bindSsoAuthRequest(
    argument: _svc_v1_BindSSOAuthRequestRequest,
    callback: grpc.requestCallback<_svc_v1_SSOAuthRequest__Output>,
  ): grpc.ClientUnaryCall;

  BootstrapAgentIdentity(
    argument: _svc_v1_BootstrapAgentIdentityRequest,
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_AgentIdentityCredentials__Output>,
  ): grpc.ClientUnaryCall;
  BootstrapAgentIdentity(
    argument: _svc_v1_BootstrapAgentIdentityRequest,
    metadata: grpc.Metadata,
    callback: grpc.requestCallback<_svc_v1_AgentIdentityCredentials__Output>,
  ): grpc.ClientUnaryCall;
  BootstrapAgentIdentity(
    argument: _svc_v1_BootstrapAgentIdentityRequest,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_AgentIdentityCredentials__Output>,
  ): grpc.ClientUnaryCall;
  BootstrapAgentIdentity(
    argument: _svc_v1_BootstrapAgentIdentityRequest,
    callback: grpc.requestCallback<_svc_v1_AgentIdentityCredentials__Output>,
  ): grpc.ClientUnaryCall;
  bootstrapAgentIdentity(
    argument: _svc_v1_BootstrapAgentIdentityRequest,
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_AgentIdentityCredentials__Output>,
  ): grpc.ClientUnaryCall;
  bootstrapAgentIdentity(
    argument: _svc_v1_BootstrapAgentIdentityRequest,
    metadata: grpc.Metadata,
    callback: grpc.requestCallback<_svc_v1_AgentIdentityCredentials__Output>,
  ): grpc.ClientUnaryCall;
  bootstrapAgentIdentity(
    argument: _svc_v1_BootstrapAgentIdentityRequest,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_AgentIdentityCredentials__Output>,
  ): grpc.ClientUnaryCall;
  bootstrapAgentIdentity(
    argument: _svc_v1_BootstrapAgentIdentityRequest,
    callback: grpc.requestCallback<_svc_v1_AgentIdentityCredentials__Output>,
  ): grpc.ClientUnaryCall;

  CheckNodeRegistered(
    argument: _svc_v1_CheckNodeRegisteredRequest,
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_CheckNodeRegisteredResponse__Output>,
  ): grpc.ClientUnaryCall;
  CheckNodeRegistered(
    argument: _svc_v1_CheckNodeRegisteredRequest,
    metadata: grpc.Metadata,
    callback: grpc.requestCallback<_svc_v1_CheckNodeRegisteredResponse__Output>,
  ): grpc.ClientUnaryCall;
  CheckNodeRegistered(
    argument: _svc_v1_CheckNodeRegisteredRequest,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_CheckNodeRegisteredResponse__Output>,
  ): grpc.ClientUnaryCall;
  CheckNodeRegistered(
    argument: _svc_v1_CheckNodeRegisteredRequest,
    callback: grpc.requestCallback<_svc_v1_CheckNodeRegisteredResponse__Output>,
  ): grpc.ClientUnaryCall;
  checkNodeRegistered(
    argument: _svc_v1_CheckNodeRegisteredRequest,
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_CheckNodeRegisteredResponse__Output>,
  ): grpc.ClientUnaryCall;
  checkNodeRegistered(
    argument: _svc_v1_CheckNodeRegisteredRequest,
    metadata: grpc.Metadata,
    callback: grpc.requestCallback<_svc_v1_CheckNodeRegisteredResponse__Output>,
  ): grpc.ClientUnaryCall;
  checkNodeRegistered(
    argument: _svc_v1_CheckNodeRegisteredRequest,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_CheckNodeRegisteredResponse__Output>,
  ): grpc.ClientUnaryCall;
  checkNodeRegistered(
    argument: _svc_v1_CheckNodeRegisteredRequest,
    callback: grpc.requestCallback<_svc_v1_CheckNodeRegisteredResponse__Output>,
  ): grpc.ClientUnaryCall;

  CreateAgentIdentity(
    argument: _svc_v1_CreateAgentIdentityRequest,
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_CreateAgentIdentityResponse__Output>,
  ): grpc.ClientUnaryCall;
  CreateAgentIdentity(
    argument: _svc_v1_CreateAgentIdentityRequest,
    metadata: grpc.Metadata,
    callback: grpc.requestCallback<_svc_v1_CreateAgentIdentityResponse__Output>,
  ): grpc.ClientUnaryCall;
  CreateAgentIdentity(
    argument: _svc_v1_CreateAgentIdentityRequest,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_CreateAgentIdentityResponse__Output>,
  ): grpc.ClientUnaryCall;
  CreateAgentIdentity(
    argument: _svc_v1_CreateAgentIdentityRequest,
    callback: grpc.requestCallback<_svc_v1_CreateAgentIdentityResponse__Output>,
  ): grpc.ClientUnaryCall;
  createAgentIdentity(
    argument: _svc_v1_CreateAgentIdentityRequest,
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_CreateAgentIdentityResponse__Output>,
  ): grpc.ClientUnaryCall;
  createAgentIdentity(
    argument: _svc_v1_CreateAgentIdentityRequest,
    metadata: grpc.Metadata,
    callback: grpc.requestCallback<_svc_v1_CreateAgentIdentityResponse__Output>,
  ): grpc.ClientUnaryCall;
  createAgentIdentity(
    argument: _svc_v1_CreateAgentIdentityRequest,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_CreateAgentIdentityResponse__Output>,
  ): grpc.ClientUnaryCall;
  createAgentIdentity(
    argument: _svc_v1_CreateAgentIdentityRequest,
    callback: grpc.requestCallback<_svc_v1_CreateAgentIdentityResponse__Output>,
  ): grpc.ClientUnaryCall;

  CreateAppSession(
    argument: _svc_v1_CreateAppSessionRequest,
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_CreateAppSessionResponse__Output>,
  ): grpc.ClientUnaryCall;
  CreateAppSession(
    argument: _svc_v1_CreateAppSessionRequest,
    metadata: grpc.Metadata,
    callback: grpc.requestCallback<_svc_v1_CreateAppSessionResponse__Output>,
  ): grpc.ClientUnaryCall;
  CreateAppSession(
    argument: _svc_v1_CreateAppSessionRequest,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_CreateAppSessionResponse__Output>,
  ): grpc.ClientUnaryCall;
  CreateAppSession(
    argument: _svc_v1_CreateAppSessionRequest,
    callback: grpc.requestCallback<_svc_v1_CreateAppSessionResponse__Output>,
  ): grpc.ClientUnaryCall;
  createAppSession(
    argument: _svc_v1_CreateAppSessionRequest,
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_CreateAppSessionResponse__Output>,
  ): grpc.ClientUnaryCall;
  createAppSession(
    argument: _svc_v1_CreateAppSessionRequest,
    metadata: grpc.Metadata,
    callback: grpc.requestCallback<_svc_v1_CreateAppSessionResponse__Output>,
  ): grpc.ClientUnaryCall;
  createAppSession(
    argument: _svc_v1_CreateAppSessionRequest,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_CreateAppSessionResponse__Output>,
  ): grpc.ClientUnaryCall;
  createAppSession(
    argument: _svc_v1_CreateAppSessionRequest,
    callback: grpc.requestCallback<_svc_v1_CreateAppSessionResponse__Output>,
  ): grpc.ClientUnaryCall;

  CreateJoinToken(
    argument: _svc_v1_CreateJoinTokenRequest,
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_CreateJoinTokenResponse__Output>,
  ): grpc.ClientUnaryCall;
  CreateJoinToken(
    argument: _svc_v1_CreateJoinTokenRequest,
    metadata: grpc.Metadata,
    callback: grpc.requestCallback<_svc_v1_CreateJoinTokenResponse__Output>,
  ): grpc.ClientUnaryCall;
  CreateJoinToken(
    argument: _svc_v1_CreateJoinTokenRequest,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_CreateJoinTokenResponse__Output>,
  ): grpc.ClientUnaryCall;
  CreateJoinToken(
    argument: _svc_v1_CreateJoinTokenRequest,
    callback: grpc.requestCallback<_svc_v1_CreateJoinTokenResponse__Output>,
  ): grpc.ClientUnaryCall;
  createJoinToken(
    argument: _svc_v1_CreateJoinTokenRequest,
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_CreateJoinTokenResponse__Output>,
  ): grpc.ClientUnaryCall;
  createJoinToken(
    argument: _svc_v1_CreateJoinTokenRequest,
    metadata: grpc.Metadata,
    callback: grpc.requestCallback<_svc_v1_CreateJoinTokenResponse__Output>,
  ): grpc.ClientUnaryCall;
  createJoinToken(
    argument: _svc_v1_CreateJoinTokenRequest,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_CreateJoinTokenResponse__Output>,
  ): grpc.ClientUnaryCall;
  createJoinToken(
    argument: _svc_v1_CreateJoinTokenRequest,
    callback: grpc.requestCallback<_svc_v1_CreateJoinTokenResponse__Output>,
  ): grpc.ClientUnaryCall;

  CreateLock(
    argument: _svc_v1_CreateLockRequest,
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_Lock__Output>,
  ): grpc.ClientUnaryCall;
  CreateLock(
    argument: _svc_v1_CreateLockRequest,
    metadata: grpc.Metadata,
    callback: grpc.requestCallback<_svc_v1_Lock__Output>,
  ): grpc.ClientUnaryCall;
  CreateLock(
    argument: _svc_v1_CreateLockRequest,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_Lock__Output>,
  ): grpc.ClientUnaryCall;
  CreateLock(
    argument: _svc_v1_CreateLockRequest,
    callback: grpc.requestCallback<_svc_v1_Lock__Output>,
  ): grpc.ClientUnaryCall;
  createLock(
    argument: _svc_v1_CreateLockRequest,
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_Lock__Output>,
  ): grpc.ClientUnaryCall;
  createLock(
    argument: _svc_v1_CreateLockRequest,
    metadata: grpc.Metadata,
    callback: grpc.requestCallback<_svc_v1_Lock__Output>,
  ): grpc.ClientUnaryCall;
  createLock(
    argument: _svc_v1_CreateLockRequest,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_Lock__Output>,
  ): grpc.ClientUnaryCall;
  createLock(
    argument: _svc_v1_CreateLockRequest,
    callback: grpc.requestCallback<_svc_v1_Lock__Output>,
  ): grpc.ClientUnaryCall;

  CreatePasswordReset(
    argument: _svc_v1_CreatePasswordResetRequest,
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_PasswordResetToken__Output>,
  ): grpc.ClientUnaryCall;
  CreatePasswordReset(
    argument: _svc_v1_CreatePasswordResetRequest,
    metadata: grpc.Metadata,
    callback: grpc.requestCallback<_svc_v1_PasswordResetToken__Output>,
  ): grpc.ClientUnaryCall;
  CreatePasswordReset(
    argument: _svc_v1_CreatePasswordResetRequest,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_PasswordResetToken__Output>,
  ): grpc.ClientUnaryCall;
  CreatePasswordReset(
    argument: _svc_v1_CreatePasswordResetRequest,
    callback: grpc.requestCallback<_svc_v1_PasswordResetToken__Output>,
  ): grpc.ClientUnaryCall;
  createPasswordReset(
    argument: _svc_v1_CreatePasswordResetRequest,
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_PasswordResetToken__Output>,
  ): grpc.ClientUnaryCall;
  createPasswordReset(
    argument: _svc_v1_CreatePasswordResetRequest,
    metadata: grpc.Metadata,
    callback: grpc.requestCallback<_svc_v1_PasswordResetToken__Output>,
  ): grpc.ClientUnaryCall;
  createPasswordReset(
    argument: _svc_v1_CreatePasswordResetRequest,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_PasswordResetToken__Output>,
  ): grpc.ClientUnaryCall;
  createPasswordReset(
    argument: _svc_v1_CreatePasswordResetRequest,
    callback: grpc.requestCallback<_svc_v1_PasswordResetToken__Output>,
  ): grpc.ClientUnaryCall;

  CreateSSOAuthRequest(
    argument: _svc_v1_CreateSSOAuthRequestRequest,
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_SSOAuthRequest__Output>,
  ): grpc.ClientUnaryCall;
  CreateSSOAuthRequest(
    argument: _svc_v1_CreateSSOAuthRequestRequest,
    metadata: grpc.Metadata,
    callback: grpc.requestCallback<_svc_v1_SSOAuthRequest__Output>,
  ): grpc.ClientUnaryCall;
  CreateSSOAuthRequest(
    argument: _svc_v1_CreateSSOAuthRequestRequest,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_SSOAuthRequest__Output>,
  ): grpc.ClientUnaryCall;
  CreateSSOAuthRequest(
    argument: _svc_v1_CreateSSOAuthRequestRequest,
    callback: grpc.requestCallback<_svc_v1_SSOAuthRequest__Output>,
  ): grpc.ClientUnaryCall;
  createSsoAuthRequest(
    argument: _svc_v1_CreateSSOAuthRequestRequest,
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_SSOAuthRequest__Output>,
  ): grpc.ClientUnaryCall;
  createSsoAuthRequest(
    argument: _svc_v1_CreateSSOAuthRequestRequest,
    metadata: grpc.Metadata,
    callback: grpc.requestCallback<_svc_v1_SSOAuthRequest__Output>,
  ): grpc.ClientUnaryCall;
  createSsoAuthRequest(
    argument: _svc_v1_CreateSSOAuthRequestRequest,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_SSOAuthRequest__Output>,
  ): grpc.ClientUnaryCall;
  createSsoAuthRequest(
    argument: _svc_v1_CreateSSOAuthRequestRequest,
    callback: grpc.requestCallback<_svc_v1_SSOAuthRequest__Output>,
  ): grpc.ClientUnaryCall;

  CreateUser(
    argument: _svc_v1_CreateUserRequest,
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_CreateUserResponse__Output>,
  ): grpc.ClientUnaryCall;
  CreateUser(
    argument: _svc_v1_CreateUserRequest,
    metadata: grpc.Metadata,
    callback: grpc.requestCallback<_svc_v1_CreateUserResponse__Output>,
  ): grpc.ClientUnaryCall;
  CreateUser(
    argument: _svc_v1_CreateUserRequest,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_CreateUserResponse__Output>,
  ): grpc.ClientUnaryCall;
  CreateUser(
    argument: _svc_v1_CreateUserRequest,
    callback: grpc.requestCallback<_svc_v1_CreateUserResponse__Output>,
  ): grpc.ClientUnaryCall;
  createUser(
    argument: _svc_v1_CreateUserRequest,
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_CreateUserResponse__Output>,
  ): grpc.ClientUnaryCall;
  createUser(
    argument: _svc_v1_CreateUserRequest,
    metadata: grpc.Metadata,
    callback: grpc.requestCallback<_svc_v1_CreateUserResponse__Output>,
  ): grpc.ClientUnaryCall;
  createUser(
    argument: _svc_v1_CreateUserRequest,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_CreateUserResponse__Output>,
  ): grpc.ClientUnaryCall;
  createUser(
    argument: _svc_v1_CreateUserRequest,
    callback: grpc.requestCallback<_svc_v1_CreateUserResponse__Output>,
  ): grpc.ClientUnaryCall;

  DeleteAgentIdentity(
    argument: _svc_v1_DeleteAgentIdentityRequest,
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_DeleteAgentIdentityResponse__Output>,
  ): grpc.ClientUnaryCall;
  DeleteAgentIdentity(
    argument: _svc_v1_DeleteAgentIdentityRequest,
    metadata: grpc.Metadata,
    callback: grpc.requestCallback<_svc_v1_DeleteAgentIdentityResponse__Output>,
  ): grpc.ClientUnaryCall;
  DeleteAgentIdentity(
    argument: _svc_v1_DeleteAgentIdentityRequest,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_DeleteAgentIdentityResponse__Output>,
  ): grpc.ClientUnaryCall;
  DeleteAgentIdentity(
    argument: _svc_v1_DeleteAgentIdentityRequest,
    callback: grpc.requestCallback<_svc_v1_DeleteAgentIdentityResponse__Output>,
  ): grpc.ClientUnaryCall;
  deleteAgentIdentity(
    argument: _svc_v1_DeleteAgentIdentityRequest,
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_DeleteAgentIdentityResponse__Output>,
  ): grpc.ClientUnaryCall;
  deleteAgentIdentity(
    argument: _svc_v1_DeleteAgentIdentityRequest,
    metadata: grpc.Metadata,
    callback: grpc.requestCallback<_svc_v1_DeleteAgentIdentityResponse__Output>,
  ): grpc.ClientUnaryCall;
  deleteAgentIdentity(
    argument: _svc_v1_DeleteAgentIdentityRequest,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_DeleteAgentIdentityResponse__Output>,
  ): grpc.ClientUnaryCall;
  deleteAgentIdentity(
    argument: _svc_v1_DeleteAgentIdentityRequest,
    callback: grpc.requestCallback<_svc_v1_DeleteAgentIdentityResponse__Output>,
  ): grpc.ClientUnaryCall;

  DeleteAppSession(
    argument: _svc_v1_DeleteAppSessionRequest,
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_DeleteAppSessionResponse__Output>,
  ): grpc.ClientUnaryCall;
  DeleteAppSession(
    argument: _svc_v1_DeleteAppSessionRequest,
    metadata: grpc.Metadata,
    callback: grpc.requestCallback<_svc_v1_DeleteAppSessionResponse__Output>,
  ): grpc.ClientUnaryCall;
  DeleteAppSession(
    argument: _svc_v1_DeleteAppSessionRequest,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_DeleteAppSessionResponse__Output>,
  ): grpc.ClientUnaryCall;
  DeleteAppSession(
    argument: _svc_v1_DeleteAppSessionRequest,
    callback: grpc.requestCallback<_svc_v1_DeleteAppSessionResponse__Output>,
  ): grpc.ClientUnaryCall;
  deleteAppSession(
    argument: _svc_v1_DeleteAppSessionRequest,
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_DeleteAppSessionResponse__Output>,
  ): grpc.ClientUnaryCall;
  deleteAppSession(
    argument: _svc_v1_DeleteAppSessionRequest,
    metadata: grpc.Metadata,
    callback: grpc.requestCallback<_svc_v1_DeleteAppSessionResponse__Output>,
  ): grpc.ClientUnaryCall;
  deleteAppSession(
    argument: _svc_v1_DeleteAppSessionRequest,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_DeleteAppSessionResponse__Output>,
  ): grpc.ClientUnaryCall;
  deleteAppSession(
    argument: _svc_v1_DeleteAppSessionRequest,
    callback: grpc.requestCallback<_svc_v1_DeleteAppSessionResponse__Output>,
  ): grpc.ClientUnaryCall;

  DeleteJoinToken(
    argument: _svc_v1_DeleteJoinTokenRequest,
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_DeleteJoinTokenResponse__Output>,
  ): grpc.ClientUnaryCall;
  DeleteJoinToken(
    argument: _svc_v1_DeleteJoinTokenRequest,
    metadata: grpc.Metadata,
    callback: grpc.requestCallback<_svc_v1_DeleteJoinTokenResponse__Output>,
  ): grpc.ClientUnaryCall;
  DeleteJoinToken(
    argument: _svc_v1_DeleteJoinTokenRequest,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_DeleteJoinTokenResponse__Output>,
  ): grpc.ClientUnaryCall;
  DeleteJoinToken(
    argument: _svc_v1_DeleteJoinTokenRequest,
    callback: grpc.requestCallback<_svc_v1_DeleteJoinTokenResponse__Output>,
  ): grpc.ClientUnaryCall;
  deleteJoinToken(
    argument: _svc_v1_DeleteJoinTokenRequest,
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_DeleteJoinTokenResponse__Output>,
  ): grpc.ClientUnaryCall;
  deleteJoinToken(
    argument: _svc_v1_DeleteJoinTokenRequest,
    metadata: grpc.Metadata,
    callback: grpc.requestCallback<_svc_v1_DeleteJoinTokenResponse__Output>,
  ): grpc.ClientUnaryCall;
  deleteJoinToken(
    argument: _svc_v1_DeleteJoinTokenRequest,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_DeleteJoinTokenResponse__Output>,
  ): grpc.ClientUnaryCall;
  deleteJoinToken(
    argument: _svc_v1_DeleteJoinTokenRequest,
    callback: grpc.requestCallback<_svc_v1_DeleteJoinTokenResponse__Output>,
  ): grpc.ClientUnaryCall;

  DeleteLock(
    argument: _svc_v1_DeleteLockRequest,
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_DeleteLockResponse__Output>,
  ): grpc.ClientUnaryCall;
  DeleteLock(
    argument: _svc_v1_DeleteLockRequest,
    metadata: grpc.Metadata,
    callback: grpc.requestCallback<_svc_v1_DeleteLockResponse__Output>,
  ): grpc.ClientUnaryCall;
  DeleteLock(
    argument: _svc_v1_DeleteLockRequest,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_DeleteLockResponse__Output>,
  ): grpc.ClientUnaryCall;
  DeleteLock(
    argument: _svc_v1_DeleteLockRequest,
    callback: grpc.requestCallback<_svc_v1_DeleteLockResponse__Output>,
  ): grpc.ClientUnaryCall;
  deleteLock(
    argument: _svc_v1_DeleteLockRequest,
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_DeleteLockResponse__Output>,
  ): grpc.ClientUnaryCall;
  deleteLock(
    argument: _svc_v1_DeleteLockRequest,
    metadata: grpc.Metadata,
    callback: grpc.requestCallback<_svc_v1_DeleteLockResponse__Output>,
  ): grpc.ClientUnaryCall;
  deleteLock(
    argument: _svc_v1_DeleteLockRequest,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_DeleteLockResponse__Output>,
  ): grpc.ClientUnaryCall;
  deleteLock(
    argument: _svc_v1_DeleteLockRequest,
    callback: grpc.requestCallback<_svc_v1_DeleteLockResponse__Output>,
  ): grpc.ClientUnaryCall;

  DeleteNode(
    argument: _svc_v1_DeleteNodeRequest,
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_DeleteNodeResponse__Output>,
  ): grpc.ClientUnaryCall;
  DeleteNode(
    argument: _svc_v1_DeleteNodeRequest,
    metadata: grpc.Metadata,
    callback: grpc.requestCallback<_svc_v1_DeleteNodeResponse__Output>,
  ): grpc.ClientUnaryCall;
  DeleteNode(
    argument: _svc_v1_DeleteNodeRequest,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_DeleteNodeResponse__Output>,
  ): grpc.ClientUnaryCall;
  DeleteNode(
    argument: _svc_v1_DeleteNodeRequest,
    callback: grpc.requestCallback<_svc_v1_DeleteNodeResponse__Output>,
  ): grpc.ClientUnaryCall;
  deleteNode(
    argument: _svc_v1_DeleteNodeRequest,
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_DeleteNodeResponse__Output>,
  ): grpc.ClientUnaryCall;
  deleteNode(
    argument: _svc_v1_DeleteNodeRequest,
    metadata: grpc.Metadata,
    callback: grpc.requestCallback<_svc_v1_DeleteNodeResponse__Output>,
  ): grpc.ClientUnaryCall;
  deleteNode(
    argument: _svc_v1_DeleteNodeRequest,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_DeleteNodeResponse__Output>,
  ): grpc.ClientUnaryCall;
  deleteNode(
    argument: _svc_v1_DeleteNodeRequest,
    callback: grpc.requestCallback<_svc_v1_DeleteNodeResponse__Output>,
  ): grpc.ClientUnaryCall;

  DeleteSession(
    argument: _svc_v1_DeleteSessionRequest,
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_DeleteSessionResponse__Output>,
  ): grpc.ClientUnaryCall;
  DeleteSession(
    argument: _svc_v1_DeleteSessionRequest,
    metadata: grpc.Metadata,
    callback: grpc.requestCallback<_svc_v1_DeleteSessionResponse__Output>,
  ): grpc.ClientUnaryCall;
  DeleteSession(
    argument: _svc_v1_DeleteSessionRequest,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_DeleteSessionResponse__Output>,
  ): grpc.ClientUnaryCall;
  DeleteSession(
    argument: _svc_v1_DeleteSessionRequest,
    callback: grpc.requestCallback<_svc_v1_DeleteSessionResponse__Output>,
  ): grpc.ClientUnaryCall;
  deleteSession(
    argument: _svc_v1_DeleteSessionRequest,
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_DeleteSessionResponse__Output>,
  ): grpc.ClientUnaryCall;
  deleteSession(
    argument: _svc_v1_DeleteSessionRequest,
    metadata: grpc.Metadata,
    callback: grpc.requestCallback<_svc_v1_DeleteSessionResponse__Output>,
  ): grpc.ClientUnaryCall;
  deleteSession(
    argument: _svc_v1_DeleteSessionRequest,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_DeleteSessionResponse__Output>,
  ): grpc.ClientUnaryCall;
  deleteSession(
    argument: _svc_v1_DeleteSessionRequest,
    callback: grpc.requestCallback<_svc_v1_DeleteSessionResponse__Output>,
  ): grpc.ClientUnaryCall;

  DeleteUser(
    argument: _svc_v1_DeleteUserRequest,
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_DeleteUserResponse__Output>,
  ): grpc.ClientUnaryCall;
  DeleteUser(
    argument: _svc_v1_DeleteUserRequest,
    metadata: grpc.Metadata,
    callback: grpc.requestCallback<_svc_v1_DeleteUserResponse__Output>,
  ): grpc.ClientUnaryCall;
  DeleteUser(
    argument: _svc_v1_DeleteUserRequest,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_DeleteUserResponse__Output>,
  ): grpc.ClientUnaryCall;
  DeleteUser(
    argument: _svc_v1_DeleteUserRequest,
    callback: grpc.requestCallback<_svc_v1_DeleteUserResponse__Output>,
  ): grpc.ClientUnaryCall;
  deleteUser(
    argument: _svc_v1_DeleteUserRequest,
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_DeleteUserResponse__Output>,
  ): grpc.ClientUnaryCall;
  deleteUser(
    argument: _svc_v1_DeleteUserRequest,
    metadata: grpc.Metadata,
    callback: grpc.requestCallback<_svc_v1_DeleteUserResponse__Output>,
  ): grpc.ClientUnaryCall;
  deleteUser(
    argument: _svc_v1_DeleteUserRequest,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_DeleteUserResponse__Output>,
  ): grpc.ClientUnaryCall;
  deleteUser(
    argument: _svc_v1_DeleteUserRequest,
    callback: grpc.requestCallback<_svc_v1_DeleteUserResponse__Output>,
  ): grpc.ClientUnaryCall;

  DeleteWebAuthnDevice(
    argument: _svc_v1_DeleteWebAuthnDeviceRequest,
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_DeleteWebAuthnDeviceResponse__Output>,
  ): grpc.ClientUnaryCall;
  DeleteWebAuthnDevice(
    argument: _svc_v1_DeleteWebAuthnDeviceRequest,
    metadata: grpc.Metadata,
    callback: grpc.requestCallback<_svc_v1_DeleteWebAuthnDeviceResponse__Output>,
  ): grpc.ClientUnaryCall;
  DeleteWebAuthnDevice(
    argument: _svc_v1_DeleteWebAuthnDeviceRequest,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_DeleteWebAuthnDeviceResponse__Output>,
  ): grpc.ClientUnaryCall;
  DeleteWebAuthnDevice(
    argument: _svc_v1_DeleteWebAuthnDeviceRequest,
    callback: grpc.requestCallback<_svc_v1_DeleteWebAuthnDeviceResponse__Output>,
  ): grpc.ClientUnaryCall;
  deleteWebAuthnDevice(
    argument: _svc_v1_DeleteWebAuthnDeviceRequest,
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_DeleteWebAuthnDeviceResponse__Output>,
  ): grpc.ClientUnaryCall;
  deleteWebAuthnDevice(
    argument: _svc_v1_DeleteWebAuthnDeviceRequest,
    metadata: grpc.Metadata,
    callback: grpc.requestCallback<_svc_v1_DeleteWebAuthnDeviceResponse__Output>,
  ): grpc.ClientUnaryCall;
  deleteWebAuthnDevice(
    argument: _svc_v1_DeleteWebAuthnDeviceRequest,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_DeleteWebAuthnDeviceResponse__Output>,
  ): grpc.ClientUnaryCall;
  deleteWebAuthnDevice(
    argument: _svc_v1_DeleteWebAuthnDeviceRequest,
    callback: grpc.requestCallback<_svc_v1_DeleteWebAuthnDeviceResponse__Output>,
  ): grpc.ClientUnaryCall;

  EmitAuditEvent(
    argument: _svc_v1_EmitAuditEventRequest,
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_AuditEvent__Output>,
  ): grpc.ClientUnaryCall;
  EmitAuditEvent(
    argument: _svc_v1_EmitAuditEventRequest,
    metadata: grpc.Metadata,
    callback: grpc.requestCallback<_svc_v1_AuditEvent__Output>,
  ): grpc.ClientUnaryCall;
  EmitAuditEvent(
    argument: _svc_v1_EmitAuditEventRequest,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_AuditEvent__Output>,
  ): grpc.ClientUnaryCall;
  EmitAuditEvent(
    argument: _svc_v1_EmitAuditEventRequest,
    callback: grpc.requestCallback<_svc_v1_AuditEvent__Output>,
  ): grpc.ClientUnaryCall;
  emitAuditEvent(
    argument: _svc_v1_EmitAuditEventRequest,
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_AuditEvent__Output>,
  ): grpc.ClientUnaryCall;
  emitAuditEvent(
    argument: _svc_v1_EmitAuditEventRequest,
    metadata: grpc.Metadata,
    callback: grpc.requestCallback<_svc_v1_AuditEvent__Output>,
  ): grpc.ClientUnaryCall;
  emitAuditEvent(
    argument: _svc_v1_EmitAuditEventRequest,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_AuditEvent__Output>,
  ): grpc.ClientUnaryCall;
  emitAuditEvent(
    argument: _svc_v1_EmitAuditEventRequest,
    callback: grpc.requestCallback<_svc_v1_AuditEvent__Output>,
  ): grpc.ClientUnaryCall;

  ExchangeAppSession(
    argument: _svc_v1_ExchangeAppSessionRequest,
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_AppSessionGrant__Output>,
  ): grpc.ClientUnaryCall;
  ExchangeAppSession(
    argument: _svc_v1_ExchangeAppSessionRequest,
    metadata: grpc.Metadata,
    callback: grpc.requestCallback<_svc_v1_AppSessionGrant__Output>,
  ): grpc.ClientUnaryCall;
  ExchangeAppSession(
    argument: _svc_v1_ExchangeAppSessionRequest,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_AppSessionGrant__Output>,
  ): grpc.ClientUnaryCall;
  ExchangeAppSession(
    argument: _svc_v1_ExchangeAppSessionRequest,
    callback: grpc.requestCallback<_svc_v1_AppSessionGrant__Output>,
  ): grpc.ClientUnaryCall;
  exchangeAppSession(
    argument: _svc_v1_ExchangeAppSessionRequest,
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_AppSessionGrant__Output>,
  ): grpc.ClientUnaryCall;
  exchangeAppSession(
    argument: _svc_v1_ExchangeAppSessionRequest,
    metadata: grpc.Metadata,
    callback: grpc.requestCallback<_svc_v1_AppSessionGrant__Output>,
  ): grpc.ClientUnaryCall;
  exchangeAppSession(
    argument: _svc_v1_ExchangeAppSessionRequest,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_AppSessionGrant__Output>,
  ): grpc.ClientUnaryCall;
  exchangeAppSession(
    argument: _svc_v1_ExchangeAppSessionRequest,
    callback: grpc.requestCallback<_svc_v1_AppSessionGrant__Output>,
  ): grpc.ClientUnaryCall;

  ExchangeSSOCode(
    argument: _svc_v1_ExchangeSSOCodeRequest,
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_AuthenticateLocalResponse__Output>,
  ): grpc.ClientUnaryCall;
  ExchangeSSOCode(
    argument: _svc_v1_ExchangeSSOCodeRequest,
    metadata: grpc.Metadata,
    callback: grpc.requestCallback<_svc_v1_AuthenticateLocalResponse__Output>,
  ): grpc.ClientUnaryCall;
  ExchangeSSOCode(
    argument: _svc_v1_ExchangeSSOCodeRequest,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_AuthenticateLocalResponse__Output>,
  ): grpc.ClientUnaryCall;
  ExchangeSSOCode(
    argument: _svc_v1_ExchangeSSOCodeRequest,
    callback: grpc.requestCallback<_svc_v1_AuthenticateLocalResponse__Output>,
  ): grpc.ClientUnaryCall;
  exchangeSsoCode(
    argument: _svc_v1_ExchangeSSOCodeRequest,
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_AuthenticateLocalResponse__Output>,
  ): grpc.ClientUnaryCall;
  exchangeSsoCode(
    argument: _svc_v1_ExchangeSSOCodeRequest,
    metadata: grpc.Metadata,
    callback: grpc.requestCallback<_svc_v1_AuthenticateLocalResponse__Output>,
  ): grpc.ClientUnaryCall;
  exchangeSsoCode(
    argument: _svc_v1_ExchangeSSOCodeRequest,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_AuthenticateLocalResponse__Output>,
  ): grpc.ClientUnaryCall;
  exchangeSsoCode(
    argument: _svc_v1_ExchangeSSOCodeRequest,
    callback: grpc.requestCallback<_svc_v1_AuthenticateLocalResponse__Output>,
  ): grpc.ClientUnaryCall;

  ExportKrl(
    argument: _svc_v1_ExportKrlRequest,
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_ExportKrlResponse__Output>,
  ): grpc.ClientUnaryCall;
  ExportKrl(
    argument: _svc_v1_ExportKrlRequest,
    metadata: grpc.Metadata,
    callback: grpc.requestCallback<_svc_v1_ExportKrlResponse__Output>,
  ): grpc.ClientUnaryCall;
  ExportKrl(
    argument: _svc_v1_ExportKrlRequest,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_ExportKrlResponse__Output>,
  ): grpc.ClientUnaryCall;
  ExportKrl(
    argument: _svc_v1_ExportKrlRequest,
    callback: grpc.requestCallback<_svc_v1_ExportKrlResponse__Output>,
  ): grpc.ClientUnaryCall;
  exportKrl(
    argument: _svc_v1_ExportKrlRequest,
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_ExportKrlResponse__Output>,
  ): grpc.ClientUnaryCall;
  exportKrl(
    argument: _svc_v1_ExportKrlRequest,
    metadata: grpc.Metadata,
    callback: grpc.requestCallback<_svc_v1_ExportKrlResponse__Output>,
  ): grpc.ClientUnaryCall;
  exportKrl(
    argument: _svc_v1_ExportKrlRequest,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_ExportKrlResponse__Output>,
  ): grpc.ClientUnaryCall;
  exportKrl(
    argument: _svc_v1_ExportKrlRequest,
    callback: grpc.requestCallback<_svc_v1_ExportKrlResponse__Output>,
  ): grpc.ClientUnaryCall;

  FinishWebAuthnLogin(
    argument: _svc_v1_FinishWebAuthnLoginRequest,
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_AuthenticateLocalResponse__Output>,
  ): grpc.ClientUnaryCall;
  FinishWebAuthnLogin(
    argument: _svc_v1_FinishWebAuthnLoginRequest,
    metadata: grpc.Metadata,
    callback: grpc.requestCallback<_svc_v1_AuthenticateLocalResponse__Output>,
  ): grpc.ClientUnaryCall;
  FinishWebAuthnLogin(
    argument: _svc_v1_FinishWebAuthnLoginRequest,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_AuthenticateLocalResponse__Output>,
  ): grpc.ClientUnaryCall;
  FinishWebAuthnLogin(
    argument: _svc_v1_FinishWebAuthnLoginRequest,
    callback: grpc.requestCallback<_svc_v1_AuthenticateLocalResponse__Output>,
  ): grpc.ClientUnaryCall;
  finishWebAuthnLogin(
    argument: _svc_v1_FinishWebAuthnLoginRequest,
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_AuthenticateLocalResponse__Output>,
  ): grpc.ClientUnaryCall;
  finishWebAuthnLogin(
    argument: _svc_v1_FinishWebAuthnLoginRequest,
    metadata: grpc.Metadata,
    callback: grpc.requestCallback<_svc_v1_AuthenticateLocalResponse__Output>,
  ): grpc.ClientUnaryCall;
  finishWebAuthnLogin(
    argument: _svc_v1_FinishWebAuthnLoginRequest,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_AuthenticateLocalResponse__Output>,
  ): grpc.ClientUnaryCall;
  finishWebAuthnLogin(
    argument: _svc_v1_FinishWebAuthnLoginRequest,
    callback: grpc.requestCallback<_svc_v1_AuthenticateLocalResponse__Output>,
  ): grpc.ClientUnaryCall;

  FinishWebAuthnRegistration(
    argument: _svc_v1_FinishWebAuthnRegistrationRequest,
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_WebAuthnDevice__Output>,
  ): grpc.ClientUnaryCall;
  FinishWebAuthnRegistration(
    argument: _svc_v1_FinishWebAuthnRegistrationRequest,
    metadata: grpc.Metadata,
    callback: grpc.requestCallback<_svc_v1_WebAuthnDevice__Output>,
  ): grpc.ClientUnaryCall;
  FinishWebAuthnRegistration(
    argument: _svc_v1_FinishWebAuthnRegistrationRequest,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_WebAuthnDevice__Output>,
  ): grpc.ClientUnaryCall;
  FinishWebAuthnRegistration(
    argument: _svc_v1_FinishWebAuthnRegistrationRequest,
    callback: grpc.requestCallback<_svc_v1_WebAuthnDevice__Output>,
  ): grpc.ClientUnaryCall;
  finishWebAuthnRegistration(
    argument: _svc_v1_FinishWebAuthnRegistrationRequest,
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_WebAuthnDevice__Output>,
  ): grpc.ClientUnaryCall;
  finishWebAuthnRegistration(
    argument: _svc_v1_FinishWebAuthnRegistrationRequest,
    metadata: grpc.Metadata,
    callback: grpc.requestCallback<_svc_v1_WebAuthnDevice__Output>,
  ): grpc.ClientUnaryCall;
  finishWebAuthnRegistration(
    argument: _svc_v1_FinishWebAuthnRegistrationRequest,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_WebAuthnDevice__Output>,
  ): grpc.ClientUnaryCall;
  finishWebAuthnRegistration(
    argument: _svc_v1_FinishWebAuthnRegistrationRequest,
    callback: grpc.requestCallback<_svc_v1_WebAuthnDevice__Output>,
  ): grpc.ClientUnaryCall;

  GetAppSession(
    argument: _svc_v1_GetAppSessionRequest,
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_AppSessionGrant__Output>,
  ): grpc.ClientUnaryCall;
  GetAppSession(
    argument: _svc_v1_GetAppSessionRequest,
    metadata: grpc.Metadata,
    callback: grpc.requestCallback<_svc_v1_AppSessionGrant__Output>,
  ): grpc.ClientUnaryCall;
  GetAppSession(
    argument: _svc_v1_GetAppSessionRequest,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_AppSessionGrant__Output>,
  ): grpc.ClientUnaryCall;
  GetAppSession(
    argument: _svc_v1_GetAppSessionRequest,
    callback: grpc.requestCallback<_svc_v1_AppSessionGrant__Output>,
  ): grpc.ClientUnaryCall;
  getAppSession(
    argument: _svc_v1_GetAppSessionRequest,
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_AppSessionGrant__Output>,
  ): grpc.ClientUnaryCall;
  getAppSession(
    argument: _svc_v1_GetAppSessionRequest,
    metadata: grpc.Metadata,
    callback: grpc.requestCallback<_svc_v1_AppSessionGrant__Output>,
  ): grpc.ClientUnaryCall;
  getAppSession(
    argument: _svc_v1_GetAppSessionRequest,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_AppSessionGrant__Output>,
  ): grpc.ClientUnaryCall;
  getAppSession(
    argument: _svc_v1_GetAppSessionRequest,
    callback: grpc.requestCallback<_svc_v1_AppSessionGrant__Output>,
  ): grpc.ClientUnaryCall;

  GetClusterInfo(
    argument: _svc_v1_GetClusterInfoRequest,
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_ClusterInfo__Output>,
  ): grpc.ClientUnaryCall;
  GetClusterInfo(
    argument: _svc_v1_GetClusterInfoRequest,
    metadata: grpc.Metadata,
    callback: grpc.requestCallback<_svc_v1_ClusterInfo__Output>,
  ): grpc.ClientUnaryCall;
  GetClusterInfo(
    argument: _svc_v1_GetClusterInfoRequest,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_ClusterInfo__Output>,
  ): grpc.ClientUnaryCall;
  GetClusterInfo(
    argument: _svc_v1_GetClusterInfoRequest,
    callback: grpc.requestCallback<_svc_v1_ClusterInfo__Output>,
  ): grpc.ClientUnaryCall;
  getClusterInfo(
    argument: _svc_v1_GetClusterInfoRequest,
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_ClusterInfo__Output>,
  ): grpc.ClientUnaryCall;
  getClusterInfo(
    argument: _svc_v1_GetClusterInfoRequest,
    metadata: grpc.Metadata,
    callback: grpc.requestCallback<_svc_v1_ClusterInfo__Output>,
  ): grpc.ClientUnaryCall;
  getClusterInfo(
    argument: _svc_v1_GetClusterInfoRequest,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_ClusterInfo__Output>,
  ): grpc.ClientUnaryCall;
  getClusterInfo(
    argument: _svc_v1_GetClusterInfoRequest,
    callback: grpc.requestCallback<_svc_v1_ClusterInfo__Output>,
  ): grpc.ClientUnaryCall;

  GetJoinTokenUsage(
    argument: _svc_v1_GetJoinTokenUsageRequest,
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_JoinTokenUsage__Output>,
  ): grpc.ClientUnaryCall;
  GetJoinTokenUsage(
    argument: _svc_v1_GetJoinTokenUsageRequest,
    metadata: grpc.Metadata,
    callback: grpc.requestCallback<_svc_v1_JoinTokenUsage__Output>,
  ): grpc.ClientUnaryCall;
  GetJoinTokenUsage(
    argument: _svc_v1_GetJoinTokenUsageRequest,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_JoinTokenUsage__Output>,
  ): grpc.ClientUnaryCall;
  GetJoinTokenUsage(
    argument: _svc_v1_GetJoinTokenUsageRequest,
    callback: grpc.requestCallback<_svc_v1_JoinTokenUsage__Output>,
  ): grpc.ClientUnaryCall;
  getJoinTokenUsage(
    argument: _svc_v1_GetJoinTokenUsageRequest,
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_JoinTokenUsage__Output>,
  ): grpc.ClientUnaryCall;
  getJoinTokenUsage(
    argument: _svc_v1_GetJoinTokenUsageRequest,
    metadata: grpc.Metadata,
    callback: grpc.requestCallback<_svc_v1_JoinTokenUsage__Output>,
  ): grpc.ClientUnaryCall;
  getJoinTokenUsage(
    argument: _svc_v1_GetJoinTokenUsageRequest,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_JoinTokenUsage__Output>,
  ): grpc.ClientUnaryCall;
  getJoinTokenUsage(
    argument: _svc_v1_GetJoinTokenUsageRequest,
    callback: grpc.requestCallback<_svc_v1_JoinTokenUsage__Output>,
  ): grpc.ClientUnaryCall;

  GetPublicKeys(
    argument: _svc_v1_GetPublicKeysRequest,
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_PublicKeys__Output>,
  ): grpc.ClientUnaryCall;
  GetPublicKeys(
    argument: _svc_v1_GetPublicKeysRequest,
    metadata: grpc.Metadata,
    callback: grpc.requestCallback<_svc_v1_PublicKeys__Output>,
  ): grpc.ClientUnaryCall;
  GetPublicKeys(
    argument: _svc_v1_GetPublicKeysRequest,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_PublicKeys__Output>,
  ): grpc.ClientUnaryCall;
  GetPublicKeys(
    argument: _svc_v1_GetPublicKeysRequest,
    callback: grpc.requestCallback<_svc_v1_PublicKeys__Output>,
  ): grpc.ClientUnaryCall;
  getPublicKeys(
    argument: _svc_v1_GetPublicKeysRequest,
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_PublicKeys__Output>,
  ): grpc.ClientUnaryCall;
  getPublicKeys(
    argument: _svc_v1_GetPublicKeysRequest,
    metadata: grpc.Metadata,
    callback: grpc.requestCallback<_svc_v1_PublicKeys__Output>,
  ): grpc.ClientUnaryCall;
  getPublicKeys(
    argument: _svc_v1_GetPublicKeysRequest,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_PublicKeys__Output>,
  ): grpc.ClientUnaryCall;
  getPublicKeys(
    argument: _svc_v1_GetPublicKeysRequest,
    callback: grpc.requestCallback<_svc_v1_PublicKeys__Output>,
  ): grpc.ClientUnaryCall;

  GetRecording(
    argument: _svc_v1_GetRecordingRequest,
    metadata: grpc.Metadata,
    options?: grpc.CallOptions,
  ): grpc.ClientReadableStream<_svc_v1_GetRecordingResponse__Output>;
  GetRecording(
    argument: _svc_v1_GetRecordingRequest,
    options?: grpc.CallOptions,
  ): grpc.ClientReadableStream<_svc_v1_GetRecordingResponse__Output>;
  getRecording(
    argument: _svc_v1_GetRecordingRequest,
    metadata: grpc.Metadata,
    options?: grpc.CallOptions,
  ): grpc.ClientReadableStream<_svc_v1_GetRecordingResponse__Output>;
  getRecording(
    argument: _svc_v1_GetRecordingRequest,
    options?: grpc.CallOptions,
  ): grpc.ClientReadableStream<_svc_v1_GetRecordingResponse__Output>;

  GetSession(
    argument: _svc_v1_GetSessionRequest,
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_SessionView__Output>,
  ): grpc.ClientUnaryCall;
  GetSession(
    argument: _svc_v1_GetSessionRequest,
    metadata: grpc.Metadata,
    callback: grpc.requestCallback<_svc_v1_SessionView__Output>,
  ): grpc.ClientUnaryCall;
  GetSession(
    argument: _svc_v1_GetSessionRequest,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_SessionView__Output>,
  ): grpc.ClientUnaryCall;
  GetSession(
    argument: _svc_v1_GetSessionRequest,
    callback: grpc.requestCallback<_svc_v1_SessionView__Output>,
  ): grpc.ClientUnaryCall;
  getSession(
    argument: _svc_v1_GetSessionRequest,
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_SessionView__Output>,
  ): grpc.ClientUnaryCall;
  getSession(
    argument: _svc_v1_GetSessionRequest,
    metadata: grpc.Metadata,
    callback: grpc.requestCallback<_svc_v1_SessionView__Output>,
  ): grpc.ClientUnaryCall;
  getSession(
    argument: _svc_v1_GetSessionRequest,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_SessionView__Output>,
  ): grpc.ClientUnaryCall;
  getSession(
    argument: _svc_v1_GetSessionRequest,
    callback: grpc.requestCallback<_svc_v1_SessionView__Output>,
  ): grpc.ClientUnaryCall;

  Heartbeat(
    argument: _svc_v1_HeartbeatRequest,
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_HeartbeatResponse__Output>,
  ): grpc.ClientUnaryCall;
  Heartbeat(
    argument: _svc_v1_HeartbeatRequest,
    metadata: grpc.Metadata,
    callback: grpc.requestCallback<_svc_v1_HeartbeatResponse__Output>,
  ): grpc.ClientUnaryCall;
  Heartbeat(
    argument: _svc_v1_HeartbeatRequest,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_HeartbeatResponse__Output>,
  ): grpc.ClientUnaryCall;
  Heartbeat(
    argument: _svc_v1_HeartbeatRequest,
    callback: grpc.requestCallback<_svc_v1_HeartbeatResponse__Output>,
  ): grpc.ClientUnaryCall;
  heartbeat(
    argument: _svc_v1_HeartbeatRequest,
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_HeartbeatResponse__Output>,
  ): grpc.ClientUnaryCall;
  heartbeat(
    argument: _svc_v1_HeartbeatRequest,
    metadata: grpc.Metadata,
    callback: grpc.requestCallback<_svc_v1_HeartbeatResponse__Output>,
  ): grpc.ClientUnaryCall;
  heartbeat(
    argument: _svc_v1_HeartbeatRequest,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_HeartbeatResponse__Output>,
  ): grpc.ClientUnaryCall;
  heartbeat(
    argument: _svc_v1_HeartbeatRequest,
    callback: grpc.requestCallback<_svc_v1_HeartbeatResponse__Output>,
  ): grpc.ClientUnaryCall;

  IssueUserCerts(
    argument: _svc_v1_IssueUserCertsRequest,
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_IssueUserCertsResponse__Output>,
  ): grpc.ClientUnaryCall;
  IssueUserCerts(
    argument: _svc_v1_IssueUserCertsRequest,
    metadata: grpc.Metadata,
    callback: grpc.requestCallback<_svc_v1_IssueUserCertsResponse__Output>,
  ): grpc.ClientUnaryCall;
  IssueUserCerts(
    argument: _svc_v1_IssueUserCertsRequest,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_IssueUserCertsResponse__Output>,
  ): grpc.ClientUnaryCall;
  IssueUserCerts(
    argument: _svc_v1_IssueUserCertsRequest,
    callback: grpc.requestCallback<_svc_v1_IssueUserCertsResponse__Output>,
  ): grpc.ClientUnaryCall;
  issueUserCerts(
    argument: _svc_v1_IssueUserCertsRequest,
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_IssueUserCertsResponse__Output>,
  ): grpc.ClientUnaryCall;
  issueUserCerts(
    argument: _svc_v1_IssueUserCertsRequest,
    metadata: grpc.Metadata,
    callback: grpc.requestCallback<_svc_v1_IssueUserCertsResponse__Output>,
  ): grpc.ClientUnaryCall;
  issueUserCerts(
    argument: _svc_v1_IssueUserCertsRequest,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_IssueUserCertsResponse__Output>,
  ): grpc.ClientUnaryCall;
  issueUserCerts(
    argument: _svc_v1_IssueUserCertsRequest,
    callback: grpc.requestCallback<_svc_v1_IssueUserCertsResponse__Output>,
  ): grpc.ClientUnaryCall;

  IssueWorkloadSVID(
    argument: _svc_v1_IssueWorkloadSVIDRequest,
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_IssueWorkloadSVIDResponse__Output>,
  ): grpc.ClientUnaryCall;
  IssueWorkloadSVID(
    argument: _svc_v1_IssueWorkloadSVIDRequest,
    metadata: grpc.Metadata,
    callback: grpc.requestCallback<_svc_v1_IssueWorkloadSVIDResponse__Output>,
  ): grpc.ClientUnaryCall;
  IssueWorkloadSVID(
    argument: _svc_v1_IssueWorkloadSVIDRequest,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_IssueWorkloadSVIDResponse__Output>,
  ): grpc.ClientUnaryCall;
  IssueWorkloadSVID(
    argument: _svc_v1_IssueWorkloadSVIDRequest,
    callback: grpc.requestCallback<_svc_v1_IssueWorkloadSVIDResponse__Output>,
  ): grpc.ClientUnaryCall;
  issueWorkloadSvid(
    argument: _svc_v1_IssueWorkloadSVIDRequest,
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_IssueWorkloadSVIDResponse__Output>,
  ): grpc.ClientUnaryCall;
  issueWorkloadSvid(
    argument: _svc_v1_IssueWorkloadSVIDRequest,
    metadata: grpc.Metadata,
    callback: grpc.requestCallback<_svc_v1_IssueWorkloadSVIDResponse__Output>,
  ): grpc.ClientUnaryCall;
  issueWorkloadSvid(
    argument: _svc_v1_IssueWorkloadSVIDRequest,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_IssueWorkloadSVIDResponse__Output>,
  ): grpc.ClientUnaryCall;
  issueWorkloadSvid(
    argument: _svc_v1_IssueWorkloadSVIDRequest,
    callback: grpc.requestCallback<_svc_v1_IssueWorkloadSVIDResponse__Output>,
  ): grpc.ClientUnaryCall;

  ListAgentIdentities(
    argument: _svc_v1_ListAgentIdentitiesRequest,
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_ListAgentIdentitiesResponse__Output>,
  ): grpc.ClientUnaryCall;
  ListAgentIdentities(
    argument: _svc_v1_ListAgentIdentitiesRequest,
    metadata: grpc.Metadata,
    callback: grpc.requestCallback<_svc_v1_ListAgentIdentitiesResponse__Output>,
  ): grpc.ClientUnaryCall;
  ListAgentIdentities(
    argument: _svc_v1_ListAgentIdentitiesRequest,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_ListAgentIdentitiesResponse__Output>,
  ): grpc.ClientUnaryCall;
  ListAgentIdentities(
    argument: _svc_v1_ListAgentIdentitiesRequest,
    callback: grpc.requestCallback<_svc_v1_ListAgentIdentitiesResponse__Output>,
  ): grpc.ClientUnaryCall;
  listAgentIdentities(
    argument: _svc_v1_ListAgentIdentitiesRequest,
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_ListAgentIdentitiesResponse__Output>,
  ): grpc.ClientUnaryCall;
  listAgentIdentities(
    argument: _svc_v1_ListAgentIdentitiesRequest,
    metadata: grpc.Metadata,
    callback: grpc.requestCallback<_svc_v1_ListAgentIdentitiesResponse__Output>,
  ): grpc.ClientUnaryCall;
  listAgentIdentities(
    argument: _svc_v1_ListAgentIdentitiesRequest,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_ListAgentIdentitiesResponse__Output>,
  ): grpc.ClientUnaryCall;
  listAgentIdentities(
    argument: _svc_v1_ListAgentIdentitiesRequest,
    callback: grpc.requestCallback<_svc_v1_ListAgentIdentitiesResponse__Output>,
  ): grpc.ClientUnaryCall;

  ListApps(
    argument: _svc_v1_ListAppsRequest,
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_ListAppsResponse__Output>,
  ): grpc.ClientUnaryCall;
  ListApps(
    argument: _svc_v1_ListAppsRequest,
    metadata: grpc.Metadata,
    callback: grpc.requestCallback<_svc_v1_ListAppsResponse__Output>,
  ): grpc.ClientUnaryCall;
  ListApps(
    argument: _svc_v1_ListAppsRequest,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_ListAppsResponse__Output>,
  ): grpc.ClientUnaryCall;
  ListApps(
    argument: _svc_v1_ListAppsRequest,
    callback: grpc.requestCallback<_svc_v1_ListAppsResponse__Output>,
  ): grpc.ClientUnaryCall;
  listApps(
    argument: _svc_v1_ListAppsRequest,
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_ListAppsResponse__Output>,
  ): grpc.ClientUnaryCall;
  listApps(
    argument: _svc_v1_ListAppsRequest,
    metadata: grpc.Metadata,
    callback: grpc.requestCallback<_svc_v1_ListAppsResponse__Output>,
  ): grpc.ClientUnaryCall;
  listApps(
    argument: _svc_v1_ListAppsRequest,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_ListAppsResponse__Output>,
  ): grpc.ClientUnaryCall;
  listApps(
    argument: _svc_v1_ListAppsRequest,
    callback: grpc.requestCallback<_svc_v1_ListAppsResponse__Output>,
  ): grpc.ClientUnaryCall;

  ListCertAuthorities(
    argument: _svc_v1_ListCertAuthoritiesRequest,
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_ListCertAuthoritiesResponse__Output>,
  ): grpc.ClientUnaryCall;
  ListCertAuthorities(
    argument: _svc_v1_ListCertAuthoritiesRequest,
    metadata: grpc.Metadata,
    callback: grpc.requestCallback<_svc_v1_ListCertAuthoritiesResponse__Output>,
  ): grpc.ClientUnaryCall;
  ListCertAuthorities(
    argument: _svc_v1_ListCertAuthoritiesRequest,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_ListCertAuthoritiesResponse__Output>,
  ): grpc.ClientUnaryCall;
  ListCertAuthorities(
    argument: _svc_v1_ListCertAuthoritiesRequest,
    callback: grpc.requestCallback<_svc_v1_ListCertAuthoritiesResponse__Output>,
  ): grpc.ClientUnaryCall;
  listCertAuthorities(
    argument: _svc_v1_ListCertAuthoritiesRequest,
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_ListCertAuthoritiesResponse__Output>,
  ): grpc.ClientUnaryCall;
  listCertAuthorities(
    argument: _svc_v1_ListCertAuthoritiesRequest,
    metadata: grpc.Metadata,
    callback: grpc.requestCallback<_svc_v1_ListCertAuthoritiesResponse__Output>,
  ): grpc.ClientUnaryCall;
  listCertAuthorities(
    argument: _svc_v1_ListCertAuthoritiesRequest,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_ListCertAuthoritiesResponse__Output>,
  ): grpc.ClientUnaryCall;
  listCertAuthorities(
    argument: _svc_v1_ListCertAuthoritiesRequest,
    callback: grpc.requestCallback<_svc_v1_ListCertAuthoritiesResponse__Output>,
  ): grpc.ClientUnaryCall;

  ListJoinTokens(
    argument: _svc_v1_ListJoinTokensRequest,
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_ListJoinTokensResponse__Output>,
  ): grpc.ClientUnaryCall;
  ListJoinTokens(
    argument: _svc_v1_ListJoinTokensRequest,
    metadata: grpc.Metadata,
    callback: grpc.requestCallback<_svc_v1_ListJoinTokensResponse__Output>,
  ): grpc.ClientUnaryCall;
  ListJoinTokens(
    argument: _svc_v1_ListJoinTokensRequest,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_ListJoinTokensResponse__Output>,
  ): grpc.ClientUnaryCall;
  ListJoinTokens(
    argument: _svc_v1_ListJoinTokensRequest,
    callback: grpc.requestCallback<_svc_v1_ListJoinTokensResponse__Output>,
  ): grpc.ClientUnaryCall;
  listJoinTokens(
    argument: _svc_v1_ListJoinTokensRequest,
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_ListJoinTokensResponse__Output>,
  ): grpc.ClientUnaryCall;
  listJoinTokens(
    argument: _svc_v1_ListJoinTokensRequest,
    metadata: grpc.Metadata,
    callback: grpc.requestCallback<_svc_v1_ListJoinTokensResponse__Output>,
  ): grpc.ClientUnaryCall;
  listJoinTokens(
    argument: _svc_v1_ListJoinTokensRequest,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_ListJoinTokensResponse__Output>,
  ): grpc.ClientUnaryCall;
  listJoinTokens(
    argument: _svc_v1_ListJoinTokensRequest,
    callback: grpc.requestCallback<_svc_v1_ListJoinTokensResponse__Output>,
  ): grpc.ClientUnaryCall;

  ListLocks(
    argument: _svc_v1_ListLocksRequest,
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_ListLocksResponse__Output>,
  ): grpc.ClientUnaryCall;
  ListLocks(
    argument: _svc_v1_ListLocksRequest,
    metadata: grpc.Metadata,
    callback: grpc.requestCallback<_svc_v1_ListLocksResponse__Output>,
  ): grpc.ClientUnaryCall;
  ListLocks(
    argument: _svc_v1_ListLocksRequest,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_ListLocksResponse__Output>,
  ): grpc.ClientUnaryCall;
  ListLocks(
    argument: _svc_v1_ListLocksRequest,
    callback: grpc.requestCallback<_svc_v1_ListLocksResponse__Output>,
  ): grpc.ClientUnaryCall;
  listLocks(
    argument: _svc_v1_ListLocksRequest,
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_ListLocksResponse__Output>,
  ): grpc.ClientUnaryCall;
  listLocks(
    argument: _svc_v1_ListLocksRequest,
    metadata: grpc.Metadata,
    callback: grpc.requestCallback<_svc_v1_ListLocksResponse__Output>,
  ): grpc.ClientUnaryCall;
  listLocks(
    argument: _svc_v1_ListLocksRequest,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_ListLocksResponse__Output>,
  ): grpc.ClientUnaryCall;
  listLocks(
    argument: _svc_v1_ListLocksRequest,
    callback: grpc.requestCallback<_svc_v1_ListLocksResponse__Output>,
  ): grpc.ClientUnaryCall;

  ListNodes(
    argument: _svc_v1_ListNodesRequest,
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_ListNodesResponse__Output>,
  ): grpc.ClientUnaryCall;
  ListNodes(
    argument: _svc_v1_ListNodesRequest,
    metadata: grpc.Metadata,
    callback: grpc.requestCallback<_svc_v1_ListNodesResponse__Output>,
  ): grpc.ClientUnaryCall;
  ListNodes(
    argument: _svc_v1_ListNodesRequest,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_ListNodesResponse__Output>,
  ): grpc.ClientUnaryCall;
  ListNodes(
    argument: _svc_v1_ListNodesRequest,
    callback: grpc.requestCallback<_svc_v1_ListNodesResponse__Output>,
  ): grpc.ClientUnaryCall;
  listNodes(
    argument: _svc_v1_ListNodesRequest,
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_ListNodesResponse__Output>,
  ): grpc.ClientUnaryCall;
  listNodes(
    argument: _svc_v1_ListNodesRequest,
    metadata: grpc.Metadata,
    callback: grpc.requestCallback<_svc_v1_ListNodesResponse__Output>,
  ): grpc.ClientUnaryCall;
  listNodes(
    argument: _svc_v1_ListNodesRequest,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_ListNodesResponse__Output>,
  ): grpc.ClientUnaryCall;
  listNodes(
    argument: _svc_v1_ListNodesRequest,
    callback: grpc.requestCallback<_svc_v1_ListNodesResponse__Output>,
  ): grpc.ClientUnaryCall;

  ListRecordings(
    argument: _svc_v1_ListRecordingsRequest,
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_ListRecordingsResponse__Output>,
  ): grpc.ClientUnaryCall;
  ListRecordings(
    argument: _svc_v1_ListRecordingsRequest,
    metadata: grpc.Metadata,
    callback: grpc.requestCallback<_svc_v1_ListRecordingsResponse__Output>,
  ): grpc.ClientUnaryCall;
  ListRecordings(
    argument: _svc_v1_ListRecordingsRequest,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_ListRecordingsResponse__Output>,
  ): grpc.ClientUnaryCall;
  ListRecordings(
    argument: _svc_v1_ListRecordingsRequest,
    callback: grpc.requestCallback<_svc_v1_ListRecordingsResponse__Output>,
  ): grpc.ClientUnaryCall;
  listRecordings(
    argument: _svc_v1_ListRecordingsRequest,
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_ListRecordingsResponse__Output>,
  ): grpc.ClientUnaryCall;
  listRecordings(
    argument: _svc_v1_ListRecordingsRequest,
    metadata: grpc.Metadata,
    callback: grpc.requestCallback<_svc_v1_ListRecordingsResponse__Output>,
  ): grpc.ClientUnaryCall;
  listRecordings(
    argument: _svc_v1_ListRecordingsRequest,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_ListRecordingsResponse__Output>,
  ): grpc.ClientUnaryCall;
  listRecordings(
    argument: _svc_v1_ListRecordingsRequest,
    callback: grpc.requestCallback<_svc_v1_ListRecordingsResponse__Output>,
  ): grpc.ClientUnaryCall;

  ListRoles(
    argument: _svc_v1_ListRolesRequest,
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_ListRolesResponse__Output>,
  ): grpc.ClientUnaryCall;
  ListRoles(
    argument: _svc_v1_ListRolesRequest,
    metadata: grpc.Metadata,
    callback: grpc.requestCallback<_svc_v1_ListRolesResponse__Output>,
  ): grpc.ClientUnaryCall;
  ListRoles(
    argument: _svc_v1_ListRolesRequest,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_ListRolesResponse__Output>,
  ): grpc.ClientUnaryCall;
  ListRoles(
    argument: _svc_v1_ListRolesRequest,
    callback: grpc.requestCallback<_svc_v1_ListRolesResponse__Output>,
  ): grpc.ClientUnaryCall;
  listRoles(
    argument: _svc_v1_ListRolesRequest,
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_ListRolesResponse__Output>,
  ): grpc.ClientUnaryCall;
  listRoles(
    argument: _svc_v1_ListRolesRequest,
    metadata: grpc.Metadata,
    callback: grpc.requestCallback<_svc_v1_ListRolesResponse__Output>,
  ): grpc.ClientUnaryCall;
  listRoles(
    argument: _svc_v1_ListRolesRequest,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_ListRolesResponse__Output>,
  ): grpc.ClientUnaryCall;
  listRoles(
    argument: _svc_v1_ListRolesRequest,
    callback: grpc.requestCallback<_svc_v1_ListRolesResponse__Output>,
  ): grpc.ClientUnaryCall;

  ListUsers(
    argument: _svc_v1_ListUsersRequest,
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_ListUsersResponse__Output>,
  ): grpc.ClientUnaryCall;
  ListUsers(
    argument: _svc_v1_ListUsersRequest,
    metadata: grpc.Metadata,
    callback: grpc.requestCallback<_svc_v1_ListUsersResponse__Output>,
  ): grpc.ClientUnaryCall;
  ListUsers(
    argument: _svc_v1_ListUsersRequest,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_ListUsersResponse__Output>,
  ): grpc.ClientUnaryCall;
  ListUsers(
    argument: _svc_v1_ListUsersRequest,
    callback: grpc.requestCallback<_svc_v1_ListUsersResponse__Output>,
  ): grpc.ClientUnaryCall;
  listUsers(
    argument: _svc_v1_ListUsersRequest,
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_ListUsersResponse__Output>,
  ): grpc.ClientUnaryCall;
  listUsers(
    argument: _svc_v1_ListUsersRequest,
    metadata: grpc.Metadata,
    callback: grpc.requestCallback<_svc_v1_ListUsersResponse__Output>,
  ): grpc.ClientUnaryCall;
  listUsers(
    argument: _svc_v1_ListUsersRequest,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_ListUsersResponse__Output>,
  ): grpc.ClientUnaryCall;
  listUsers(
    argument: _svc_v1_ListUsersRequest,
    callback: grpc.requestCallback<_svc_v1_ListUsersResponse__Output>,
  ): grpc.ClientUnaryCall;

  ListWebAuthnDevices(
    argument: _svc_v1_ListWebAuthnDevicesRequest,
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_ListWebAuthnDevicesResponse__Output>,
  ): grpc.ClientUnaryCall;
  ListWebAuthnDevices(
    argument: _svc_v1_ListWebAuthnDevicesRequest,
    metadata: grpc.Metadata,
    callback: grpc.requestCallback<_svc_v1_ListWebAuthnDevicesResponse__Output>,
  ): grpc.ClientUnaryCall;
  ListWebAuthnDevices(
    argument: _svc_v1_ListWebAuthnDevicesRequest,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_ListWebAuthnDevicesResponse__Output>,
  ): grpc.ClientUnaryCall;
  ListWebAuthnDevices(
    argument: _svc_v1_ListWebAuthnDevicesRequest,
    callback: grpc.requestCallback<_svc_v1_ListWebAuthnDevicesResponse__Output>,
  ): grpc.ClientUnaryCall;
  listWebAuthnDevices(
    argument: _svc_v1_ListWebAuthnDevicesRequest,
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_ListWebAuthnDevicesResponse__Output>,
  ): grpc.ClientUnaryCall;
  listWebAuthnDevices(
    argument: _svc_v1_ListWebAuthnDevicesRequest,
    metadata: grpc.Metadata,
    callback: grpc.requestCallback<_svc_v1_ListWebAuthnDevicesResponse__Output>,
  ): grpc.ClientUnaryCall;
  listWebAuthnDevices(
    argument: _svc_v1_ListWebAuthnDevicesRequest,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_ListWebAuthnDevicesResponse__Output>,
  ): grpc.ClientUnaryCall;
  listWebAuthnDevices(
    argument: _svc_v1_ListWebAuthnDevicesRequest,
    callback: grpc.requestCallback<_svc_v1_ListWebAuthnDevicesResponse__Output>,
  ): grpc.ClientUnaryCall;

  LogoutApps(
    argument: _svc_v1_LogoutAppsRequest,
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_LogoutAppsResponse__Output>,
  ): grpc.ClientUnaryCall;
  LogoutApps(
    argument: _svc_v1_LogoutAppsRequest,
    metadata: grpc.Metadata,
    callback: grpc.requestCallback<_svc_v1_LogoutAppsResponse__Output>,
  ): grpc.ClientUnaryCall;
  LogoutApps(
    argument: _svc_v1_LogoutAppsRequest,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_LogoutAppsResponse__Output>,
  ): grpc.ClientUnaryCall;
  LogoutApps(
    argument: _svc_v1_LogoutAppsRequest,
    callback: grpc.requestCallback<_svc_v1_LogoutAppsResponse__Output>,
  ): grpc.ClientUnaryCall;
  logoutApps(
    argument: _svc_v1_LogoutAppsRequest,
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_LogoutAppsResponse__Output>,
  ): grpc.ClientUnaryCall;
  logoutApps(
    argument: _svc_v1_LogoutAppsRequest,
    metadata: grpc.Metadata,
    callback: grpc.requestCallback<_svc_v1_LogoutAppsResponse__Output>,
  ): grpc.ClientUnaryCall;
  logoutApps(
    argument: _svc_v1_LogoutAppsRequest,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_LogoutAppsResponse__Output>,
  ): grpc.ClientUnaryCall;
  logoutApps(
    argument: _svc_v1_LogoutAppsRequest,
    callback: grpc.requestCallback<_svc_v1_LogoutAppsResponse__Output>,
  ): grpc.ClientUnaryCall;

  RegisterAgent(
    argument: _svc_v1_RegisterAgentRequest,
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_RegisterAgentResponse__Output>,
  ): grpc.ClientUnaryCall;
  RegisterAgent(
    argument: _svc_v1_RegisterAgentRequest,
    metadata: grpc.Metadata,
    callback: grpc.requestCallback<_svc_v1_RegisterAgentResponse__Output>,
  ): grpc.ClientUnaryCall;
  RegisterAgent(
    argument: _svc_v1_RegisterAgentRequest,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_RegisterAgentResponse__Output>,
  ): grpc.ClientUnaryCall;
  RegisterAgent(
    argument: _svc_v1_RegisterAgentRequest,
    callback: grpc.requestCallback<_svc_v1_RegisterAgentResponse__Output>,
  ): grpc.ClientUnaryCall;
  registerAgent(
    argument: _svc_v1_RegisterAgentRequest,
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_RegisterAgentResponse__Output>,
  ): grpc.ClientUnaryCall;
  registerAgent(
    argument: _svc_v1_RegisterAgentRequest,
    metadata: grpc.Metadata,
    callback: grpc.requestCallback<_svc_v1_RegisterAgentResponse__Output>,
  ): grpc.ClientUnaryCall;
  registerAgent(
    argument: _svc_v1_RegisterAgentRequest,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_RegisterAgentResponse__Output>,
  ): grpc.ClientUnaryCall;
  registerAgent(
    argument: _svc_v1_RegisterAgentRequest,
    callback: grpc.requestCallback<_svc_v1_RegisterAgentResponse__Output>,
  ): grpc.ClientUnaryCall;

  RegisterUsingIAMMethod(
    metadata: grpc.Metadata,
    options?: grpc.CallOptions,
  ): grpc.ClientDuplexStream<
    _svc_v1_RegisterUsingIAMMethodRequest,
    _svc_v1_RegisterUsingIAMMethodResponse__Output
  >;
  RegisterUsingIAMMethod(
    options?: grpc.CallOptions,
  ): grpc.ClientDuplexStream<
    _svc_v1_RegisterUsingIAMMethodRequest,
    _svc_v1_RegisterUsingIAMMethodResponse__Output
  >;
  registerUsingIamMethod(
    metadata: grpc.Metadata,
    options?: grpc.CallOptions,
  ): grpc.ClientDuplexStream<
    _svc_v1_RegisterUsingIAMMethodRequest,
    _svc_v1_RegisterUsingIAMMethodResponse__Output
  >;
  registerUsingIamMethod(
    options?: grpc.CallOptions,
  ): grpc.ClientDuplexStream<
    _svc_v1_RegisterUsingIAMMethodRequest,
    _svc_v1_RegisterUsingIAMMethodResponse__Output
  >;

  RenameWebAuthnDevice(
    argument: _svc_v1_RenameWebAuthnDeviceRequest,
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_WebAuthnDevice__Output>,
  ): grpc.ClientUnaryCall;
  RenameWebAuthnDevice(
    argument: _svc_v1_RenameWebAuthnDeviceRequest,
    metadata: grpc.Metadata,
    callback: grpc.requestCallback<_svc_v1_WebAuthnDevice__Output>,
  ): grpc.ClientUnaryCall;
  RenameWebAuthnDevice(
    argument: _svc_v1_RenameWebAuthnDeviceRequest,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_WebAuthnDevice__Output>,
  ): grpc.ClientUnaryCall;
  RenameWebAuthnDevice(
    argument: _svc_v1_RenameWebAuthnDeviceRequest,
    callback: grpc.requestCallback<_svc_v1_WebAuthnDevice__Output>,
  ): grpc.ClientUnaryCall;
  renameWebAuthnDevice(
    argument: _svc_v1_RenameWebAuthnDeviceRequest,
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_WebAuthnDevice__Output>,
  ): grpc.ClientUnaryCall;
  renameWebAuthnDevice(
    argument: _svc_v1_RenameWebAuthnDeviceRequest,
    metadata: grpc.Metadata,
    callback: grpc.requestCallback<_svc_v1_WebAuthnDevice__Output>,
  ): grpc.ClientUnaryCall;
  renameWebAuthnDevice(
    argument: _svc_v1_RenameWebAuthnDeviceRequest,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_WebAuthnDevice__Output>,
  ): grpc.ClientUnaryCall;
  renameWebAuthnDevice(
    argument: _svc_v1_RenameWebAuthnDeviceRequest,
    callback: grpc.requestCallback<_svc_v1_WebAuthnDevice__Output>,
  ): grpc.ClientUnaryCall;

  RenewAgentIdentity(
    argument: _svc_v1_RenewAgentIdentityRequest,
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_AgentIdentityCredentials__Output>,
  ): grpc.ClientUnaryCall;
  RenewAgentIdentity(
    argument: _svc_v1_RenewAgentIdentityRequest,
    metadata: grpc.Metadata,
    callback: grpc.requestCallback<_svc_v1_AgentIdentityCredentials__Output>,
  ): grpc.ClientUnaryCall;
  RenewAgentIdentity(
    argument: _svc_v1_RenewAgentIdentityRequest,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_AgentIdentityCredentials__Output>,
  ): grpc.ClientUnaryCall;
  RenewAgentIdentity(
    argument: _svc_v1_RenewAgentIdentityRequest,
    callback: grpc.requestCallback<_svc_v1_AgentIdentityCredentials__Output>,
  ): grpc.ClientUnaryCall;
  renewAgentIdentity(
    argument: _svc_v1_RenewAgentIdentityRequest,
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_AgentIdentityCredentials__Output>,
  ): grpc.ClientUnaryCall;
  renewAgentIdentity(
    argument: _svc_v1_RenewAgentIdentityRequest,
    metadata: grpc.Metadata,
    callback: grpc.requestCallback<_svc_v1_AgentIdentityCredentials__Output>,
  ): grpc.ClientUnaryCall;
  renewAgentIdentity(
    argument: _svc_v1_RenewAgentIdentityRequest,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_AgentIdentityCredentials__Output>,
  ): grpc.ClientUnaryCall;
  renewAgentIdentity(
    argument: _svc_v1_RenewAgentIdentityRequest,
    callback: grpc.requestCallback<_svc_v1_AgentIdentityCredentials__Output>,
  ): grpc.ClientUnaryCall;

  RenewNodeCredentials(
    argument: _svc_v1_RenewNodeCredentialsRequest,
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_RenewNodeCredentialsResponse__Output>,
  ): grpc.ClientUnaryCall;
  RenewNodeCredentials(
    argument: _svc_v1_RenewNodeCredentialsRequest,
    metadata: grpc.Metadata,
    callback: grpc.requestCallback<_svc_v1_RenewNodeCredentialsResponse__Output>,
  ): grpc.ClientUnaryCall;
  RenewNodeCredentials(
    argument: _svc_v1_RenewNodeCredentialsRequest,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_RenewNodeCredentialsResponse__Output>,
  ): grpc.ClientUnaryCall;
  RenewNodeCredentials(
    argument: _svc_v1_RenewNodeCredentialsRequest,
    callback: grpc.requestCallback<_svc_v1_RenewNodeCredentialsResponse__Output>,
  ): grpc.ClientUnaryCall;
  renewNodeCredentials(
    argument: _svc_v1_RenewNodeCredentialsRequest,
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_RenewNodeCredentialsResponse__Output>,
  ): grpc.ClientUnaryCall;
  renewNodeCredentials(
    argument: _svc_v1_RenewNodeCredentialsRequest,
    metadata: grpc.Metadata,
    callback: grpc.requestCallback<_svc_v1_RenewNodeCredentialsResponse__Output>,
  ): grpc.ClientUnaryCall;
  renewNodeCredentials(
    argument: _svc_v1_RenewNodeCredentialsRequest,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_RenewNodeCredentialsResponse__Output>,
  ): grpc.ClientUnaryCall;
  renewNodeCredentials(
    argument: _svc_v1_RenewNodeCredentialsRequest,
    callback: grpc.requestCallback<_svc_v1_RenewNodeCredentialsResponse__Output>,
  ): grpc.ClientUnaryCall;

  ResetPassword(
    argument: _svc_v1_ResetPasswordRequest,
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_ResetPasswordResponse__Output>,
  ): grpc.ClientUnaryCall;
  ResetPassword(
    argument: _svc_v1_ResetPasswordRequest,
    metadata: grpc.Metadata,
    callback: grpc.requestCallback<_svc_v1_ResetPasswordResponse__Output>,
  ): grpc.ClientUnaryCall;
  ResetPassword(
    argument: _svc_v1_ResetPasswordRequest,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_ResetPasswordResponse__Output>,
  ): grpc.ClientUnaryCall;
  ResetPassword(
    argument: _svc_v1_ResetPasswordRequest,
    callback: grpc.requestCallback<_svc_v1_ResetPasswordResponse__Output>,
  ): grpc.ClientUnaryCall;
  resetPassword(
    argument: _svc_v1_ResetPasswordRequest,
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_ResetPasswordResponse__Output>,
  ): grpc.ClientUnaryCall;
  resetPassword(
    argument: _svc_v1_ResetPasswordRequest,
    metadata: grpc.Metadata,
    callback: grpc.requestCallback<_svc_v1_ResetPasswordResponse__Output>,
  ): grpc.ClientUnaryCall;
  resetPassword(
    argument: _svc_v1_ResetPasswordRequest,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_ResetPasswordResponse__Output>,
  ): grpc.ClientUnaryCall;
  resetPassword(
    argument: _svc_v1_ResetPasswordRequest,
    callback: grpc.requestCallback<_svc_v1_ResetPasswordResponse__Output>,
  ): grpc.ClientUnaryCall;

  RevokeUserSessions(
    argument: _svc_v1_RevokeUserSessionsRequest,
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_RevokeUserSessionsResponse__Output>,
  ): grpc.ClientUnaryCall;
  RevokeUserSessions(
    argument: _svc_v1_RevokeUserSessionsRequest,
    metadata: grpc.Metadata,
    callback: grpc.requestCallback<_svc_v1_RevokeUserSessionsResponse__Output>,
  ): grpc.ClientUnaryCall;
  RevokeUserSessions(
    argument: _svc_v1_RevokeUserSessionsRequest,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_RevokeUserSessionsResponse__Output>,
  ): grpc.ClientUnaryCall;
  RevokeUserSessions(
    argument: _svc_v1_RevokeUserSessionsRequest,
    callback: grpc.requestCallback<_svc_v1_RevokeUserSessionsResponse__Output>,
  ): grpc.ClientUnaryCall;
  revokeUserSessions(
    argument: _svc_v1_RevokeUserSessionsRequest,
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_RevokeUserSessionsResponse__Output>,
  ): grpc.ClientUnaryCall;
  revokeUserSessions(
    argument: _svc_v1_RevokeUserSessionsRequest,
    metadata: grpc.Metadata,
    callback: grpc.requestCallback<_svc_v1_RevokeUserSessionsResponse__Output>,
  ): grpc.ClientUnaryCall;
  revokeUserSessions(
    argument: _svc_v1_RevokeUserSessionsRequest,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_RevokeUserSessionsResponse__Output>,
  ): grpc.ClientUnaryCall;
  revokeUserSessions(
    argument: _svc_v1_RevokeUserSessionsRequest,
    callback: grpc.requestCallback<_svc_v1_RevokeUserSessionsResponse__Output>,
  ): grpc.ClientUnaryCall;

  RotateCertAuthority(
    argument: _svc_v1_RotateCertAuthorityRequest,
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_CertAuthorityStatus__Output>,
  ): grpc.ClientUnaryCall;
  RotateCertAuthority(
    argument: _svc_v1_RotateCertAuthorityRequest,
    metadata: grpc.Metadata,
    callback: grpc.requestCallback<_svc_v1_CertAuthorityStatus__Output>,
  ): grpc.ClientUnaryCall;
  RotateCertAuthority(
    argument: _svc_v1_RotateCertAuthorityRequest,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_CertAuthorityStatus__Output>,
  ): grpc.ClientUnaryCall;
  RotateCertAuthority(
    argument: _svc_v1_RotateCertAuthorityRequest,
    callback: grpc.requestCallback<_svc_v1_CertAuthorityStatus__Output>,
  ): grpc.ClientUnaryCall;
  rotateCertAuthority(
    argument: _svc_v1_RotateCertAuthorityRequest,
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_CertAuthorityStatus__Output>,
  ): grpc.ClientUnaryCall;
  rotateCertAuthority(
    argument: _svc_v1_RotateCertAuthorityRequest,
    metadata: grpc.Metadata,
    callback: grpc.requestCallback<_svc_v1_CertAuthorityStatus__Output>,
  ): grpc.ClientUnaryCall;
  rotateCertAuthority(
    argument: _svc_v1_RotateCertAuthorityRequest,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_CertAuthorityStatus__Output>,
  ): grpc.ClientUnaryCall;
  rotateCertAuthority(
    argument: _svc_v1_RotateCertAuthorityRequest,
    callback: grpc.requestCallback<_svc_v1_CertAuthorityStatus__Output>,
  ): grpc.ClientUnaryCall;

  SearchAuditEvents(
    argument: _svc_v1_SearchAuditEventsRequest,
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_SearchAuditEventsResponse__Output>,
  ): grpc.ClientUnaryCall;
  SearchAuditEvents(
    argument: _svc_v1_SearchAuditEventsRequest,
    metadata: grpc.Metadata,
    callback: grpc.requestCallback<_svc_v1_SearchAuditEventsResponse__Output>,
  ): grpc.ClientUnaryCall;
  SearchAuditEvents(
    argument: _svc_v1_SearchAuditEventsRequest,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_SearchAuditEventsResponse__Output>,
  ): grpc.ClientUnaryCall;
  SearchAuditEvents(
    argument: _svc_v1_SearchAuditEventsRequest,
    callback: grpc.requestCallback<_svc_v1_SearchAuditEventsResponse__Output>,
  ): grpc.ClientUnaryCall;
  searchAuditEvents(
    argument: _svc_v1_SearchAuditEventsRequest,
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_SearchAuditEventsResponse__Output>,
  ): grpc.ClientUnaryCall;
  searchAuditEvents(
    argument: _svc_v1_SearchAuditEventsRequest,
    metadata: grpc.Metadata,
    callback: grpc.requestCallback<_svc_v1_SearchAuditEventsResponse__Output>,
  ): grpc.ClientUnaryCall;
  searchAuditEvents(
    argument: _svc_v1_SearchAuditEventsRequest,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_SearchAuditEventsResponse__Output>,
  ): grpc.ClientUnaryCall;
  searchAuditEvents(
    argument: _svc_v1_SearchAuditEventsRequest,
    callback: grpc.requestCallback<_svc_v1_SearchAuditEventsResponse__Output>,
  ): grpc.ClientUnaryCall;

  UploadRecording(
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_UploadRecordingResponse__Output>,
  ): grpc.ClientWritableStream<_svc_v1_UploadRecordingRequest>;
  UploadRecording(
    metadata: grpc.Metadata,
    callback: grpc.requestCallback<_svc_v1_UploadRecordingResponse__Output>,
  ): grpc.ClientWritableStream<_svc_v1_UploadRecordingRequest>;
  UploadRecording(
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_UploadRecordingResponse__Output>,
  ): grpc.ClientWritableStream<_svc_v1_UploadRecordingRequest>;
  UploadRecording(
    callback: grpc.requestCallback<_svc_v1_UploadRecordingResponse__Output>,
  ): grpc.ClientWritableStream<_svc_v1_UploadRecordingRequest>;
  uploadRecording(
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_UploadRecordingResponse__Output>,
  ): grpc.ClientWritableStream<_svc_v1_UploadRecordingRequest>;
  uploadRecording(
    metadata: grpc.Metadata,
    callback: grpc.requestCallback<_svc_v1_UploadRecordingResponse__Output>,
  ): grpc.ClientWritableStream<_svc_v1_UploadRecordingRequest>;
  uploadRecording(
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_UploadRecordingResponse__Output>,
  ): grpc.ClientWritableStream<_svc_v1_UploadRecordingRequest>;
  uploadRecording(
    callback: grpc.requestCallback<_svc_v1_UploadRecordingResponse__Output>,
  ): grpc.ClientWritableStream<_svc_v1_UploadRecordingRequest>;

  ValidateSSOResponse(
    argument: _svc_v1_ValidateSSOResponseRequest,
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_ValidateSSOResponseResult__Output>,
  ): grpc.ClientUnaryCall;
  ValidateSSOResponse(
    argument: _svc_v1_ValidateSSOResponseRequest,
    metadata: grpc.Metadata,
    callback: grpc.requestCallback<_svc_v1_ValidateSSOResponseResult__Output>,
  ): grpc.ClientUnaryCall;
  ValidateSSOResponse(
    argument: _svc_v1_ValidateSSOResponseRequest,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_ValidateSSOResponseResult__Output>,
  ): grpc.ClientUnaryCall;
  ValidateSSOResponse(
    argument: _svc_v1_ValidateSSOResponseRequest,
    callback: grpc.requestCallback<_svc_v1_ValidateSSOResponseResult__Output>,
  ): grpc.ClientUnaryCall;
  validateSsoResponse(
    argument: _svc_v1_ValidateSSOResponseRequest,
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_ValidateSSOResponseResult__Output>,
  ): grpc.ClientUnaryCall;
  validateSsoResponse(
    argument: _svc_v1_ValidateSSOResponseRequest,
    metadata: grpc.Metadata,
    callback: grpc.requestCallback<_svc_v1_ValidateSSOResponseResult__Output>,
  ): grpc.ClientUnaryCall;
  validateSsoResponse(
    argument: _svc_v1_ValidateSSOResponseRequest,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_svc_v1_ValidateSSOResponseResult__Output>,
  ): grpc.ClientUnaryCall;
  validateSsoResponse(
    argument: _svc_v1_ValidateSSOResponseRequest,
    callback: grpc.requestCallback<_svc_v1_ValidateSSOResponseResult__Output>,
  ): grpc.ClientUnaryCall;

  WatchInventory(
    argument: _svc_v1_WatchInventoryRequest,
    metadata: grpc.Metadata,
    options?: grpc.CallOptions,
  ): grpc.ClientReadableStream<_svc_v1_InventoryEvent__Output>;
  WatchInventory(
    argument: _svc_v1_WatchInventoryRequest,
    options?: grpc.CallOptions,
  ): grpc.ClientReadableStream<_svc_v1_InventoryEvent__Output>;
  watchInventory(
    argument: _svc_v1_WatchInventoryRequest,
    metadata: grpc.Metadata,
    options?: grpc.CallOptions,
  ): grpc.ClientReadableStream<_svc_v1_InventoryEvent__Output>;
  watchInventory(
    argument: _svc_v1_WatchInventoryRequest,
    options?: grpc.CallOptions,
  ): grpc.ClientReadableStream<_svc_v1_InventoryEvent__Output>;

  WatchSessions(
    argument: _svc_v1_WatchSessionsRequest,
    metadata: grpc.Metadata,
    options?: grpc.CallOptions,
  ): grpc.ClientReadableStream<_svc_v1_SessionEvent__Output>;
  WatchSessions(
    argument: _svc_v1_WatchSessionsRequest,
    options?: grpc.CallOptions,
  ): grpc.ClientReadableStream<_svc_v1_SessionEvent__Output>;
  watchSessions(
    argument: _svc_v1_WatchSessionsRequest,
    metadata: grpc.Metadata,
    options?: grpc.CallOptions,
  ): grpc.ClientReadableStream<_svc_v1_SessionEvent__Output>;
  watchSessions(
    argument: _svc_v1_WatchSessionsRequest,
    options?: grpc.CallOptions,
  ): grpc.ClientReadableStream<_svc_v1_SessionEvent__Output>;

  WatchTrust(
    argument: _svc_v1_WatchTrustRequest,
    metadata: grpc.Metadata,
    options?: grpc.CallOptions,
  ): grpc.ClientReadableStream<_svc_v1_TrustSnapshot__Output>;
  WatchTrust(
    argument: _svc_v1_WatchTrustRequest,
    options?: grpc.CallOptions,
  ): grpc.ClientReadableStream<_svc_v1_TrustSnapshot__Output>;
  watchTrust(
    argument: _svc_v1_WatchTrustRequest,
    metadata: grpc.Metadata,
    options?: grpc.CallOptions,
  ): grpc.ClientReadableStream<_svc_v1_TrustSnapshot__Output>;
  watchTrust(
    argument: _svc_v1_WatchTrustRequest,
    options?: grpc.CallOptions,
  ): grpc.ClientReadableStream<_svc_v1_TrustSnapshot__Output>;
}

export interface AuthServiceHandlers extends grpc.UntypedServiceImplementation {
  AuthenticateLocal: grpc.handleUnaryCall<
    _svc_v1_AuthenticateLocalRequest__Output,
    _svc_v1_AuthenticateLocalResponse
  >;

  AuthenticateSPIFFE: grpc.handleUnaryCall<
    _svc_v1_AuthenticateSPIFFERequest__Output,
    _svc_v1_AuthenticateSPIFFEResponse
  >;

  AuthorizeNodeLogin: grpc.handleUnaryCall<_svc_v1_AuthorizeNodeLoginRequest__Output, _svc_v1_Node>;

  AuthorizeSshLogin: grpc.handleUnaryCall<
    _svc_v1_AuthorizeSshLoginRequest__Output,
    _svc_v1_AuthorizeSshLoginResponse
  >;

  BeginWebAuthnLogin: grpc.handleUnaryCall<
    _svc_v1_BeginWebAuthnLoginRequest__Output,
    _svc_v1_WebAuthnChallenge
  >;

  BeginWebAuthnRegistration: grpc.handleUnaryCall<
    _svc_v1_BeginWebAuthnRegistrationRequest__Output,
    _svc_v1_WebAuthnChallenge
  >;

  BindSSOAuthRequest: grpc.handleUnaryCall<_svc_v1_BindSSOAuthRequestRequest__Output, _svc_v1_SSOAuthRequest>;

  BootstrapAgentIdentity: grpc.handleUnaryCall<
    _svc_v1_BootstrapAgentIdentityRequest__Output,
    _svc_v1_AgentIdentityCredentials
  >;

  CheckNodeRegistered: grpc.handleUnaryCall<
    _svc_v1_CheckNodeRegisteredRequest__Output,
    _svc_v1_CheckNodeRegisteredResponse
  >;

  CreateAgentIdentity: grpc.handleUnaryCall<
    _svc_v1_CreateAgentIdentityRequest__Output,
    _svc_v1_CreateAgentIdentityResponse
  >;

  CreateAppSession: grpc.handleUnaryCall<
    _svc_v1_CreateAppSessionRequest__Output,
    _svc_v1_CreateAppSessionResponse
  >;

  CreateJoinToken: grpc.handleUnaryCall<
    _svc_v1_CreateJoinTokenRequest__Output,
    _svc_v1_CreateJoinTokenResponse
  >;

  CreateLock: grpc.handleUnaryCall<_svc_v1_CreateLockRequest__Output, _svc_v1_Lock>;

  CreatePasswordReset: grpc.handleUnaryCall<
    _svc_v1_CreatePasswordResetRequest__Output,
    _svc_v1_PasswordResetToken
  >;

  CreateSSOAuthRequest: grpc.handleUnaryCall<
    _svc_v1_CreateSSOAuthRequestRequest__Output,
    _svc_v1_SSOAuthRequest
  >;

  CreateUser: grpc.handleUnaryCall<_svc_v1_CreateUserRequest__Output, _svc_v1_CreateUserResponse>;

  DeleteAgentIdentity: grpc.handleUnaryCall<
    _svc_v1_DeleteAgentIdentityRequest__Output,
    _svc_v1_DeleteAgentIdentityResponse
  >;

  DeleteAppSession: grpc.handleUnaryCall<
    _svc_v1_DeleteAppSessionRequest__Output,
    _svc_v1_DeleteAppSessionResponse
  >;

  DeleteJoinToken: grpc.handleUnaryCall<
    _svc_v1_DeleteJoinTokenRequest__Output,
    _svc_v1_DeleteJoinTokenResponse
  >;

  DeleteLock: grpc.handleUnaryCall<_svc_v1_DeleteLockRequest__Output, _svc_v1_DeleteLockResponse>;

  DeleteNode: grpc.handleUnaryCall<_svc_v1_DeleteNodeRequest__Output, _svc_v1_DeleteNodeResponse>;

  DeleteSession: grpc.handleUnaryCall<_svc_v1_DeleteSessionRequest__Output, _svc_v1_DeleteSessionResponse>;

  DeleteUser: grpc.handleUnaryCall<_svc_v1_DeleteUserRequest__Output, _svc_v1_DeleteUserResponse>;

  DeleteWebAuthnDevice: grpc.handleUnaryCall<
    _svc_v1_DeleteWebAuthnDeviceRequest__Output,
    _svc_v1_DeleteWebAuthnDeviceResponse
  >;

  EmitAuditEvent: grpc.handleUnaryCall<_svc_v1_EmitAuditEventRequest__Output, _svc_v1_AuditEvent>;

  ExchangeAppSession: grpc.handleUnaryCall<
    _svc_v1_ExchangeAppSessionRequest__Output,
    _svc_v1_AppSessionGrant
  >;

  ExchangeSSOCode: grpc.handleUnaryCall<
    _svc_v1_ExchangeSSOCodeRequest__Output,
    _svc_v1_AuthenticateLocalResponse
  >;

  ExportKrl: grpc.handleUnaryCall<_svc_v1_ExportKrlRequest__Output, _svc_v1_ExportKrlResponse>;

  FinishWebAuthnLogin: grpc.handleUnaryCall<
    _svc_v1_FinishWebAuthnLoginRequest__Output,
    _svc_v1_AuthenticateLocalResponse
  >;

  FinishWebAuthnRegistration: grpc.handleUnaryCall<
    _svc_v1_FinishWebAuthnRegistrationRequest__Output,
    _svc_v1_WebAuthnDevice
  >;

  GetAppSession: grpc.handleUnaryCall<_svc_v1_GetAppSessionRequest__Output, _svc_v1_AppSessionGrant>;

  GetClusterInfo: grpc.handleUnaryCall<_svc_v1_GetClusterInfoRequest__Output, _svc_v1_ClusterInfo>;

  GetJoinTokenUsage: grpc.handleUnaryCall<_svc_v1_GetJoinTokenUsageRequest__Output, _svc_v1_JoinTokenUsage>;

  GetPublicKeys: grpc.handleUnaryCall<_svc_v1_GetPublicKeysRequest__Output, _svc_v1_PublicKeys>;

  GetRecording: grpc.handleServerStreamingCall<
    _svc_v1_GetRecordingRequest__Output,
    _svc_v1_GetRecordingResponse
  >;

  GetSession: grpc.handleUnaryCall<_svc_v1_GetSessionRequest__Output, _svc_v1_SessionView>;

  Heartbeat: grpc.handleUnaryCall<_svc_v1_HeartbeatRequest__Output, _svc_v1_HeartbeatResponse>;

  IssueUserCerts: grpc.handleUnaryCall<_svc_v1_IssueUserCertsRequest__Output, _svc_v1_IssueUserCertsResponse>;

  IssueWorkloadSVID: grpc.handleUnaryCall<
    _svc_v1_IssueWorkloadSVIDRequest__Output,
    _svc_v1_IssueWorkloadSVIDResponse
  >;

  ListAgentIdentities: grpc.handleUnaryCall<
    _svc_v1_ListAgentIdentitiesRequest__Output,
    _svc_v1_ListAgentIdentitiesResponse
  >;

  ListApps: grpc.handleUnaryCall<_svc_v1_ListAppsRequest__Output, _svc_v1_ListAppsResponse>;

  ListCertAuthorities: grpc.handleUnaryCall<
    _svc_v1_ListCertAuthoritiesRequest__Output,
    _svc_v1_ListCertAuthoritiesResponse
  >;

  ListJoinTokens: grpc.handleUnaryCall<_svc_v1_ListJoinTokensRequest__Output, _svc_v1_ListJoinTokensResponse>;

  ListLocks: grpc.handleUnaryCall<_svc_v1_ListLocksRequest__Output, _svc_v1_ListLocksResponse>;

  ListNodes: grpc.handleUnaryCall<_svc_v1_ListNodesRequest__Output, _svc_v1_ListNodesResponse>;

  ListRecordings: grpc.handleUnaryCall<_svc_v1_ListRecordingsRequest__Output, _svc_v1_ListRecordingsResponse>;

  ListRoles: grpc.handleUnaryCall<_svc_v1_ListRolesRequest__Output, _svc_v1_ListRolesResponse>;

  ListUsers: grpc.handleUnaryCall<_svc_v1_ListUsersRequest__Output, _svc_v1_ListUsersResponse>;

  ListWebAuthnDevices: grpc.handleUnaryCall<
    _svc_v1_ListWebAuthnDevicesRequest__Output,
    _svc_v1_ListWebAuthnDevicesResponse
  >;

  LogoutApps: grpc.handleUnaryCall<_svc_v1_LogoutAppsRequest__Output, _svc_v1_LogoutAppsResponse>;

  RegisterAgent: grpc.handleUnaryCall<_svc_v1_RegisterAgentRequest__Output, _svc_v1_RegisterAgentResponse>;

  RegisterUsingIAMMethod: grpc.handleBidiStreamingCall<
    _svc_v1_RegisterUsingIAMMethodRequest__Output,
    _svc_v1_RegisterUsingIAMMethodResponse
  >;

  RenameWebAuthnDevice: grpc.handleUnaryCall<
    _svc_v1_RenameWebAuthnDeviceRequest__Output,
    _svc_v1_WebAuthnDevice
  >;

  RenewAgentIdentity: grpc.handleUnaryCall<
    _svc_v1_RenewAgentIdentityRequest__Output,
    _svc_v1_AgentIdentityCredentials
  >;

  RenewNodeCredentials: grpc.handleUnaryCall<
    _svc_v1_RenewNodeCredentialsRequest__Output,
    _svc_v1_RenewNodeCredentialsResponse
  >;

  ResetPassword: grpc.handleUnaryCall<_svc_v1_ResetPasswordRequest__Output, _svc_v1_ResetPasswordResponse>;

  RevokeUserSessions: grpc.handleUnaryCall<
    _svc_v1_RevokeUserSessionsRequest__Output,
    _svc_v1_RevokeUserSessionsResponse
  >;

  RotateCertAuthority: grpc.handleUnaryCall<
    _svc_v1_RotateCertAuthorityRequest__Output,
    _svc_v1_CertAuthorityStatus
  >;

  SearchAuditEvents: grpc.handleUnaryCall<
    _svc_v1_SearchAuditEventsRequest__Output,
    _svc_v1_SearchAuditEventsResponse
  >;

  UploadRecording: grpc.handleClientStreamingCall<
    _svc_v1_UploadRecordingRequest__Output,
    _svc_v1_UploadRecordingResponse
  >;

  ValidateSSOResponse: grpc.handleUnaryCall<
    _svc_v1_ValidateSSOResponseRequest__Output,
    _svc_v1_ValidateSSOResponseResult
  >;

  WatchInventory: grpc.handleServerStreamingCall<
    _svc_v1_WatchInventoryRequest__Output,
    _svc_v1_InventoryEvent
  >;

  WatchSessions: grpc.handleServerStreamingCall<_svc_v1_WatchSessionsRequest__Output, _svc_v1_SessionEvent>;

  WatchTrust: grpc.handleServerStreamingCall<_svc_v1_WatchTrustRequest__Output, _svc_v1_TrustSnapshot>;
}

export interface AuthServiceDefinition extends grpc.ServiceDefinition {
  AuthenticateLocal: MethodDefinition<
    _svc_v1_AuthenticateLocalRequest,
    _svc_v1_AuthenticateLocalResponse,
    _svc_v1_AuthenticateLocalRequest__Output,
    _svc_v1_AuthenticateLocalResponse__Output
  >;
  AuthenticateSPIFFE: MethodDefinition<
    _svc_v1_AuthenticateSPIFFERequest,
    _svc_v1_AuthenticateSPIFFEResponse,
    _svc_v1_AuthenticateSPIFFERequest__Output,
    _svc_v1_AuthenticateSPIFFEResponse__Output
  >;
  AuthorizeNodeLogin: MethodDefinition<
    _svc_v1_AuthorizeNodeLoginRequest,
    _svc_v1_Node,
    _svc_v1_AuthorizeNodeLoginRequest__Output,
    _svc_v1_Node__Output
  >;
  AuthorizeSshLogin: MethodDefinition<
    _svc_v1_AuthorizeSshLoginRequest,
    _svc_v1_AuthorizeSshLoginResponse,
    _svc_v1_AuthorizeSshLoginRequest__Output,
    _svc_v1_AuthorizeSshLoginResponse__Output
  >;
  BeginWebAuthnLogin: MethodDefinition<
    _svc_v1_BeginWebAuthnLoginRequest,
    _svc_v1_WebAuthnChallenge,
    _svc_v1_BeginWebAuthnLoginRequest__Output,
    _svc_v1_WebAuthnChallenge__Output
  >;
  BeginWebAuthnRegistration: MethodDefinition<
    _svc_v1_BeginWebAuthnRegistrationRequest,
    _svc_v1_WebAuthnChallenge,
    _svc_v1_BeginWebAuthnRegistrationRequest__Output,
    _svc_v1_WebAuthnChallenge__Output
  >;
  BindSSOAuthRequest: MethodDefinition<
    _svc_v1_BindSSOAuthRequestRequest,
    _svc_v1_SSOAuthRequest,
    _svc_v1_BindSSOAuthRequestRequest__Output,
    _svc_v1_SSOAuthRequest__Output
  >;
  BootstrapAgentIdentity: MethodDefinition<
    _svc_v1_BootstrapAgentIdentityRequest,
    _svc_v1_AgentIdentityCredentials,
    _svc_v1_BootstrapAgentIdentityRequest__Output,
    _svc_v1_AgentIdentityCredentials__Output
  >;
  CheckNodeRegistered: MethodDefinition<
    _svc_v1_CheckNodeRegisteredRequest,
    _svc_v1_CheckNodeRegisteredResponse,
    _svc_v1_CheckNodeRegisteredRequest__Output,
    _svc_v1_CheckNodeRegisteredResponse__Output
  >;
  CreateAgentIdentity: MethodDefinition<
    _svc_v1_CreateAgentIdentityRequest,
    _svc_v1_CreateAgentIdentityResponse,
    _svc_v1_CreateAgentIdentityRequest__Output,
    _svc_v1_CreateAgentIdentityResponse__Output
  >;
  CreateAppSession: MethodDefinition<
    _svc_v1_CreateAppSessionRequest,
    _svc_v1_CreateAppSessionResponse,
    _svc_v1_CreateAppSessionRequest__Output,
    _svc_v1_CreateAppSessionResponse__Output
  >;
  CreateJoinToken: MethodDefinition<
    _svc_v1_CreateJoinTokenRequest,
    _svc_v1_CreateJoinTokenResponse,
    _svc_v1_CreateJoinTokenRequest__Output,
    _svc_v1_CreateJoinTokenResponse__Output
  >;
  CreateLock: MethodDefinition<
    _svc_v1_CreateLockRequest,
    _svc_v1_Lock,
    _svc_v1_CreateLockRequest__Output,
    _svc_v1_Lock__Output
  >;
  CreatePasswordReset: MethodDefinition<
    _svc_v1_CreatePasswordResetRequest,
    _svc_v1_PasswordResetToken,
    _svc_v1_CreatePasswordResetRequest__Output,
    _svc_v1_PasswordResetToken__Output
  >;
  CreateSSOAuthRequest: MethodDefinition<
    _svc_v1_CreateSSOAuthRequestRequest,
    _svc_v1_SSOAuthRequest,
    _svc_v1_CreateSSOAuthRequestRequest__Output,
    _svc_v1_SSOAuthRequest__Output
  >;
  CreateUser: MethodDefinition<
    _svc_v1_CreateUserRequest,
    _svc_v1_CreateUserResponse,
    _svc_v1_CreateUserRequest__Output,
    _svc_v1_CreateUserResponse__Output
  >;
  DeleteAgentIdentity: MethodDefinition<
    _svc_v1_DeleteAgentIdentityRequest,
    _svc_v1_DeleteAgentIdentityResponse,
    _svc_v1_DeleteAgentIdentityRequest__Output,
    _svc_v1_DeleteAgentIdentityResponse__Output
  >;
  DeleteAppSession: MethodDefinition<
    _svc_v1_DeleteAppSessionRequest,
    _svc_v1_DeleteAppSessionResponse,
    _svc_v1_DeleteAppSessionRequest__Output,
    _svc_v1_DeleteAppSessionResponse__Output
  >;
  DeleteJoinToken: MethodDefinition<
    _svc_v1_DeleteJoinTokenRequest,
    _svc_v1_DeleteJoinTokenResponse,
    _svc_v1_DeleteJoinTokenRequest__Output,
    _svc_v1_DeleteJoinTokenResponse__Output
  >;
  DeleteLock: MethodDefinition<
    _svc_v1_DeleteLockRequest,
    _svc_v1_DeleteLockResponse,
    _svc_v1_DeleteLockRequest__Output,
    _svc_v1_DeleteLockResponse__Output
  >;
  DeleteNode: MethodDefinition<
    _svc_v1_DeleteNodeRequest,
    _svc_v1_DeleteNodeResponse,
    _svc_v1_DeleteNodeRequest__Output,
    _svc_v1_DeleteNodeResponse__Output
  >;
  DeleteSession: MethodDefinition<
    _svc_v1_DeleteSessionRequest,
    _svc_v1_DeleteSessionResponse,
    _svc_v1_DeleteSessionRequest__Output,
    _svc_v1_DeleteSessionResponse__Output
  >;
  DeleteUser: MethodDefinition<
    _svc_v1_DeleteUserRequest,
    _svc_v1_DeleteUserResponse,
    _svc_v1_DeleteUserRequest__Output,
    _svc_v1_DeleteUserResponse__Output
  >;
  DeleteWebAuthnDevice: MethodDefinition<
    _svc_v1_DeleteWebAuthnDeviceRequest,
    _svc_v1_DeleteWebAuthnDeviceResponse,
    _svc_v1_DeleteWebAuthnDeviceRequest__Output,
    _svc_v1_DeleteWebAuthnDeviceResponse__Output
  >;
  EmitAuditEvent: MethodDefinition<
    _svc_v1_EmitAuditEventRequest,
    _svc_v1_AuditEvent,
    _svc_v1_EmitAuditEventRequest__Output,
    _svc_v1_AuditEvent__Output
  >;
  ExchangeAppSession: MethodDefinition<
    _svc_v1_ExchangeAppSessionRequest,
    _svc_v1_AppSessionGrant,
    _svc_v1_ExchangeAppSessionRequest__Output,
    _svc_v1_AppSessionGrant__Output
  >;
  ExchangeSSOCode: MethodDefinition<
    _svc_v1_ExchangeSSOCodeRequest,
    _svc_v1_AuthenticateLocalResponse,
    _svc_v1_ExchangeSSOCodeRequest__Output,
    _svc_v1_AuthenticateLocalResponse__Output
  >;
  ExportKrl: MethodDefinition<
    _svc_v1_ExportKrlRequest,
    _svc_v1_ExportKrlResponse,
    _svc_v1_ExportKrlRequest__Output,
    _svc_v1_ExportKrlResponse__Output
  >;
  FinishWebAuthnLogin: MethodDefinition<
    _svc_v1_FinishWebAuthnLoginRequest,
    _svc_v1_AuthenticateLocalResponse,
    _svc_v1_FinishWebAuthnLoginRequest__Output,
    _svc_v1_AuthenticateLocalResponse__Output
  >;
  FinishWebAuthnRegistration: MethodDefinition<
    _svc_v1_FinishWebAuthnRegistrationRequest,
    _svc_v1_WebAuthnDevice,
    _svc_v1_FinishWebAuthnRegistrationRequest__Output,
    _svc_v1_WebAuthnDevice__Output
  >;
  GetAppSession: MethodDefinition<
    _svc_v1_GetAppSessionRequest,
    _svc_v1_AppSessionGrant,
    _svc_v1_GetAppSessionRequest__Output,
    _svc_v1_AppSessionGrant__Output
  >;
  GetClusterInfo: MethodDefinition<
    _svc_v1_GetClusterInfoRequest,
    _svc_v1_ClusterInfo,
    _svc_v1_GetClusterInfoRequest__Output,
    _svc_v1_ClusterInfo__Output
  >;
  GetJoinTokenUsage: MethodDefinition<
    _svc_v1_GetJoinTokenUsageRequest,
    _svc_v1_JoinTokenUsage,
    _svc_v1_GetJoinTokenUsageRequest__Output,
    _svc_v1_JoinTokenUsage__Output
  >;
  GetPublicKeys: MethodDefinition<
    _svc_v1_GetPublicKeysRequest,
    _svc_v1_PublicKeys,
    _svc_v1_GetPublicKeysRequest__Output,
    _svc_v1_PublicKeys__Output
  >;
  GetRecording: MethodDefinition<
    _svc_v1_GetRecordingRequest,
    _svc_v1_GetRecordingResponse,
    _svc_v1_GetRecordingRequest__Output,
    _svc_v1_GetRecordingResponse__Output
  >;
  GetSession: MethodDefinition<
    _svc_v1_GetSessionRequest,
    _svc_v1_SessionView,
    _svc_v1_GetSessionRequest__Output,
    _svc_v1_SessionView__Output
  >;
  Heartbeat: MethodDefinition<
    _svc_v1_HeartbeatRequest,
    _svc_v1_HeartbeatResponse,
    _svc_v1_HeartbeatRequest__Output,
    _svc_v1_HeartbeatResponse__Output
  >;
  IssueUserCerts: MethodDefinition<
    _svc_v1_IssueUserCertsRequest,
    _svc_v1_IssueUserCertsResponse,
    _svc_v1_IssueUserCertsRequest__Output,
    _svc_v1_IssueUserCertsResponse__Output
  >;
  IssueWorkloadSVID: MethodDefinition<
    _svc_v1_IssueWorkloadSVIDRequest,
    _svc_v1_IssueWorkloadSVIDResponse,
    _svc_v1_IssueWorkloadSVIDRequest__Output,
    _svc_v1_IssueWorkloadSVIDResponse__Output
  >;
  ListAgentIdentities: MethodDefinition<
    _svc_v1_ListAgentIdentitiesRequest,
    _svc_v1_ListAgentIdentitiesResponse,
    _svc_v1_ListAgentIdentitiesRequest__Output,
    _svc_v1_ListAgentIdentitiesResponse__Output
  >;
  ListApps: MethodDefinition<
    _svc_v1_ListAppsRequest,
    _svc_v1_ListAppsResponse,
    _svc_v1_ListAppsRequest__Output,
    _svc_v1_ListAppsResponse__Output
  >;
  ListCertAuthorities: MethodDefinition<
    _svc_v1_ListCertAuthoritiesRequest,
    _svc_v1_ListCertAuthoritiesResponse,
    _svc_v1_ListCertAuthoritiesRequest__Output,
    _svc_v1_ListCertAuthoritiesResponse__Output
  >;
  ListJoinTokens: MethodDefinition<
    _svc_v1_ListJoinTokensRequest,
    _svc_v1_ListJoinTokensResponse,
    _svc_v1_ListJoinTokensRequest__Output,
    _svc_v1_ListJoinTokensResponse__Output
  >;
  ListLocks: MethodDefinition<
    _svc_v1_ListLocksRequest,
    _svc_v1_ListLocksResponse,
    _svc_v1_ListLocksRequest__Output,
    _svc_v1_ListLocksResponse__Output
  >;
  ListNodes: MethodDefinition<
    _svc_v1_ListNodesRequest,
    _svc_v1_ListNodesResponse,
    _svc_v1_ListNodesRequest__Output,
    _svc_v1_ListNodesResponse__Output
  >;
  ListRecordings: MethodDefinition<
    _svc_v1_ListRecordingsRequest,
    _svc_v1_ListRecordingsResponse,
    _svc_v1_ListRecordingsRequest__Output,
    _svc_v1_ListRecordingsResponse__Output
  >;
  ListRoles: MethodDefinition<
    _svc_v1_ListRolesRequest,
    _svc_v1_ListRolesResponse,
    _svc_v1_ListRolesRequest__Output,
    _svc_v1_ListRolesResponse__Output
  >;
  ListUsers: MethodDefinition<
    _svc_v1_ListUsersRequest,
    _svc_v1_ListUsersResponse,
    _svc_v1_ListUsersRequest__Output,
    _svc_v1_ListUsersResponse__Output
  >;
  ListWebAuthnDevices: MethodDefinition<
    _svc_v1_ListWebAuthnDevicesRequest,
    _svc_v1_ListWebAuthnDevicesResponse,
    _svc_v1_ListWebAuthnDevicesRequest__Output,
    _svc_v1_ListWebAuthnDevicesResponse__Output
  >;
  LogoutApps: MethodDefinition<
    _svc_v1_LogoutAppsRequest,
    _svc_v1_LogoutAppsResponse,
    _svc_v1_LogoutAppsRequest__Output,
    _svc_v1_LogoutAppsResponse__Output
  >;
  RegisterAgent: MethodDefinition<
    _svc_v1_RegisterAgentRequest,
    _svc_v1_RegisterAgentResponse,
    _svc_v1_RegisterAgentRequest__Output,
    _svc_v1_RegisterAgentResponse__Output
  >;
  RegisterUsingIAMMethod: MethodDefinition<
    _svc_v1_RegisterUsingIAMMethodRequest,
    _svc_v1_RegisterUsingIAMMethodResponse,
    _svc_v1_RegisterUsingIAMMethodRequest__Output,
    _svc_v1_RegisterUsingIAMMethodResponse__Output
  >;
  RenameWebAuthnDevice: MethodDefinition<
    _svc_v1_RenameWebAuthnDeviceRequest,
    _svc_v1_WebAuthnDevice,
    _svc_v1_RenameWebAuthnDeviceRequest__Output,
    _svc_v1_WebAuthnDevice__Output
  >;
  RenewAgentIdentity: MethodDefinition<
    _svc_v1_RenewAgentIdentityRequest,
    _svc_v1_AgentIdentityCredentials,
    _svc_v1_RenewAgentIdentityRequest__Output,
    _svc_v1_AgentIdentityCredentials__Output
  >;
  RenewNodeCredentials: MethodDefinition<
    _svc_v1_RenewNodeCredentialsRequest,
    _svc_v1_RenewNodeCredentialsResponse,
    _svc_v1_RenewNodeCredentialsRequest__Output,
    _svc_v1_RenewNodeCredentialsResponse__Output
  >;
  ResetPassword: MethodDefinition<
    _svc_v1_ResetPasswordRequest,
    _svc_v1_ResetPasswordResponse,
    _svc_v1_ResetPasswordRequest__Output,
    _svc_v1_ResetPasswordResponse__Output
  >;
  RevokeUserSessions: MethodDefinition<
    _svc_v1_RevokeUserSessionsRequest,
    _svc_v1_RevokeUserSessionsResponse,
    _svc_v1_RevokeUserSessionsRequest__Output,
    _svc_v1_RevokeUserSessionsResponse__Output
  >;
  RotateCertAuthority: MethodDefinition<
    _svc_v1_RotateCertAuthorityRequest,
    _svc_v1_CertAuthorityStatus,
    _svc_v1_RotateCertAuthorityRequest__Output,
    _svc_v1_CertAuthorityStatus__Output
  >;
  SearchAuditEvents: MethodDefinition<
    _svc_v1_SearchAuditEventsRequest,
    _svc_v1_SearchAuditEventsResponse,
    _svc_v1_SearchAuditEventsRequest__Output,
    _svc_v1_SearchAuditEventsResponse__Output
  >;
  UploadRecording: MethodDefinition<
    _svc_v1_UploadRecordingRequest,
    _svc_v1_UploadRecordingResponse,
    _svc_v1_UploadRecordingRequest__Output,
    _svc_v1_UploadRecordingResponse__Output
  >;
  ValidateSSOResponse: MethodDefinition<
    _svc_v1_ValidateSSOResponseRequest,
    _svc_v1_ValidateSSOResponseResult,
    _svc_v1_ValidateSSOResponseRequest__Output,
    _svc_v1_ValidateSSOResponseResult__Output
  >;
  WatchInventory: MethodDefinition<
    _svc_v1_WatchInventoryRequest,
    _svc_v1_InventoryEvent,
    _svc_v1_WatchInventoryRequest__Output,
    _svc_v1_InventoryEvent__Output
  >;
  WatchSessions: MethodDefinition<
    _svc_v1_WatchSessionsRequest,
    _svc_v1_SessionEvent,
    _svc_v1_WatchSessionsRequest__Output,
    _svc_v1_SessionEvent__Output
  >;
  WatchTrust: MethodDefinition<
    _svc_v1_WatchTrustRequest,
    _svc_v1_TrustSnapshot,
    _svc_v1_WatchTrustRequest__Output,
    _svc_v1_TrustSnapshot__Output
  >;
}
