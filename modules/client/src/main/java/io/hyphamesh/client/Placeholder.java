package io.hyphamesh.client; public final class Placeholder {}
