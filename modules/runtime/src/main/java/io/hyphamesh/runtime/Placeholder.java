package io.hyphamesh.runtime; public final class Placeholder {}
