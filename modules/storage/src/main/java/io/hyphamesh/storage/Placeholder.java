package io.hyphamesh.storage; public final class Placeholder {}
